"""``POST /internal/memory/import_external_markdown`` (reference §1.4, §1.7): a thin adapter."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from imports.services.external_import import (
    ImportBadInput,
    ImportTooLarge,
    external_markdown_import,
    import_request_parse,
)
from nekomem.characters.names import InvalidCharacterName
from nekomem.characters.services import CharacterReleaseInProgress
from nekomem.http import BadRequestBody, json_error, json_ok, read_json_object


@csrf_exempt
@require_POST
def import_external_markdown(request: HttpRequest) -> HttpResponse:
    try:
        parsed = import_request_parse(body=read_json_object(request))
        report = external_markdown_import(request=parsed)
    except (BadRequestBody, ImportBadInput, InvalidCharacterName) as exc:
        return json_error(str(exc), status=400, error_code="external_import_invalid")
    except ImportTooLarge as exc:
        return json_error(str(exc), status=413, error_code="external_import_too_large")
    except CharacterReleaseInProgress as exc:
        # The original's fence body (reference §1.7): the caller retries after the rename or delete.
        return json_ok({"status": "cancelled", "message": str(exc)}, status=409)
    counts = {
        "added_persona": report.added_persona,
        "added_facts": report.added_facts,
        "skipped_duplicates": report.skipped_duplicates,
    }
    if report.partial:
        return json_error(
            "the LLM could not fuse every persona entity; sending the same import again is safe",
            status=500,
            error_code="external_import_partial",
            partial_import={**counts, "failed_entities": report.failed_entities},
        )
    return json_ok(
        {
            "status": "success",
            "success": True,
            "character_name": parsed.character_name,
            "source_format": parsed.source_format,
            "imported_files": parsed.imported_files,
            **counts,
            "warning_count": parsed.warning_count,
        }
    )
