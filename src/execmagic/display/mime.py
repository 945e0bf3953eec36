"""The MIME type of the provenance record, apart so that registering the renderers imports none of them.

A vendor ``+json`` type, not plain ``application/json``: see :mod:`.formatters` for why.
"""

__all__ = ["PROVENANCE_MIME"]

PROVENANCE_MIME = "application/vnd.execmagic+json"
