"""Background shells (design §3.4): the registry, its reader thread, log cursors and backends.

Import from the modules: :mod:`.registry` is what the engine uses.
"""

__all__: list[str] = []
