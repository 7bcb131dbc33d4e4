"""Import/export of the original per-character directory layout (``ROOT/<name>/…``); import from here.

- ``registry``: the ``FileHandler``s each layer registers for the files it owns, with import finishers
  and hooks; the kernel knows no layer.
- ``files``: JSON/NDJSON reading and writing, progress bars, the chunked upsert of parsed rows.
- ``transfer``: ``memory_import`` / ``memory_export`` and their zip and root-folder forms, which the
  commands, the REST API, the memory browser and install mode all go through.
"""

from nekomem.portability.files import (
    PROGRESS_MIN_ITEMS,
    chunked,
    progress,
    progress_bars,
    read_json,
    read_ndjson,
    rows_upsert,
    write_json,
    write_ndjson,
    write_records,
)
from nekomem.portability.registry import (
    UNBOUND_CHARACTER,
    FileHandler,
    ImportRefused,
    ImportResult,
    MalformedFile,
    RootFileHandler,
    file_handlers,
    register_file_handler,
    register_import_finisher,
    register_import_hook,
    register_root_file_handler,
)
from nekomem.portability.transfer import (
    CharacterImported,
    ImportSource,
    memory_export,
    memory_export_archive,
    memory_export_root,
    memory_import,
    memory_import_archive,
    memory_import_root,
    memory_sources,
)

__all__ = [
    "PROGRESS_MIN_ITEMS",
    "UNBOUND_CHARACTER",
    "CharacterImported",
    "FileHandler",
    "ImportRefused",
    "ImportResult",
    "ImportSource",
    "MalformedFile",
    "RootFileHandler",
    "chunked",
    "file_handlers",
    "memory_export",
    "memory_export_archive",
    "memory_export_root",
    "memory_import",
    "memory_import_archive",
    "memory_import_root",
    "memory_sources",
    "progress",
    "progress_bars",
    "read_json",
    "read_ndjson",
    "register_file_handler",
    "register_import_finisher",
    "register_import_hook",
    "register_root_file_handler",
    "rows_upsert",
    "write_json",
    "write_ndjson",
    "write_records",
]
