"""The external Markdown import route in the OpenAPI schema."""

from __future__ import annotations

from nekomem.wire_schema import Json, json_response, operation, register

PATHS: dict[str, Json] = {
    "/internal/memory/import_external_markdown": {
        "post": operation(
            "wire_import_external_markdown",
            "Import OpenClaw/Hermes Markdown {character_name, source_format: openclaw|hermes, "
            "imported_files?, candidates (1..N), warning_count?, language?}: {status, success, "
            "character_name, source_format, imported_files, added_persona, added_facts, "
            "skipped_duplicates, warning_count}; sending the same import again is safe",
            {
                "200": json_response("WireObject", "imported"),
                "400": json_response("WireError", "external_import_invalid"),
                "409": json_response("WireObject", "{status: cancelled}: a rename or delete is in progress"),
                "413": json_response("WireError", "external_import_too_large"),
                "500": json_response(
                    "WireError", "external_import_partial: some persona entities failed; partial_import"
                ),
            },
            body="WireObject",
            parameters=[],
            secret=True,
        )
    },
}

register(__name__, paths=PATHS)
