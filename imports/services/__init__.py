"""The import's services: the request and its persona and fact writes (``external_import``), and the
reading of a workspace folder or zip (``markdown_workspace``)."""

from imports.services.external_import import (
    SOURCE_FORMATS,
    ImportBadInput,
    ImportTooLarge,
    external_markdown_import,
    import_request_parse,
)
from imports.services.markdown_workspace import workspace_read

__all__ = [
    "SOURCE_FORMATS",
    "ImportBadInput",
    "ImportTooLarge",
    "external_markdown_import",
    "import_request_parse",
    "workspace_read",
]
