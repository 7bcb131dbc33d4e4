# ruff: noqa: E501  user-facing sentences: wrapping them only hides the text
"""English."""

TEXT = {
    "reasons": {
        "invalid_json": "The file is not valid JSON in UTF-8.",
        "invalid_pack": "The file is not a pack: its top level must be a JSON object.",
        "unexpected_pack_field": "The pack has a top-level field that a pack may not have.",
        "unsupported_schema_version": "The pack's schema_version is not 1, the only version this server reads.",
        "invalid_pack_id": "The pack_id must be 2 to 64 lowercase letters, digits, dots, underscores or hyphens, starting with a letter or digit.",
        "invalid_material_type": "The material_type must be knowledge or corpus.",
        "invalid_source": "The source must have a name (at most 200 characters) and at most a homepage and a license (500 characters each).",
        "invalid_entries": "The entries must be a list of 1 to 5000 entries.",
        "too_many_entries": "The pack has more than 5000 entries.",
        "invalid_entry": "An entry is malformed: it needs a one-line title and a content, each within its length limit.",
        "unexpected_entry_field": "An entry has a field that an entry may not have.",
        "duplicate_title": "Two entries have the same title.",
        "pack_too_large": "The file is larger than 10 MiB.",
        "capacity_packs": "There are already 200 packs installed: remove one first.",
        "capacity_entries": "With this pack there would be more than 20,000 entries in all: remove a pack first.",
        "capacity_chunks": "With this pack there would be more than 20,000 chunks in all: remove a pack first.",
        "capacity_bytes": "With this pack the pack files would take more than 64 MiB: remove a pack first.",
        "too_many_chunks": "The pack's entries make more than 10,000 chunks: split it into smaller packs.",
        "job_in_progress": "This pack is already being imported: wait for that import to finish.",
        "knowledge_busy": "The knowledge store is busy: try again in a moment.",
        "knowledge_stopping": "The server is shutting down: try again after it restarts.",
        "knowledge_starting": "The knowledge store is still starting: try again in a moment.",
        "invalid_request": "The upload was not understood: choose exactly one pack file.",
        "not_found": "That pack or entry is no longer installed.",
        "registry_invalid": "The knowledge folder's registry.json cannot be read: the packs shown here keep answering, but nothing is taken in from the folder or written to it until the file is repaired or removed.",
        "knowledge_error": "Something went wrong on the server; nothing was changed.",
    },
    "unknown_reason": "The pack was refused ({reason}).",
}
