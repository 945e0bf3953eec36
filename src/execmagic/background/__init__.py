"""Background shells (ARCHITECTURE.md, "Background shells"): the registry, its reader thread, log cursors and backends.

Import from the modules: :mod:`.registry` is what the engine uses.
"""

__all__: list[str] = []
