"""A character's memory as a zip download, and an upload that imports one (the same core as the
``export_memory`` / ``import_memory`` commands and the REST API)."""

from __future__ import annotations

from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from nekomem.browser.access import browser_page
from nekomem.characters.names import InvalidCharacterName
from nekomem.characters.selectors import character_get
from nekomem.portability import ImportRefused, memory_export_archive, memory_import_archive

# Messages name at most this many problems; the rest are counted.
SHOWN_PROBLEMS = 10


@require_GET
@browser_page
def export_archive(request: HttpRequest, name: str) -> FileResponse:
    character = character_get(name=name)
    if character is None:
        raise Http404(f"no character named {name!r}")
    return FileResponse(
        memory_export_archive(character=character),
        as_attachment=True,
        filename=f"{character.name}-memory.zip",
        content_type="application/zip",
    )


@require_POST
@browser_page
def import_archive(request: HttpRequest, name: str) -> HttpResponse:
    upload = request.FILES.get("archive")
    back = redirect("browser-character", name=name) if character_get(name=name) else redirect("front_door")
    if upload is None:
        messages.error(request, "请选择一个 zip 文件。Choose a zip file to import.")
        return back
    try:
        report = memory_import_archive(name=name, archive=upload)
    except InvalidCharacterName as exc:
        messages.error(request, f"角色名无效 Invalid character name: {exc}")
        return back
    except ImportRefused as exc:
        shown = exc.problems[:SHOWN_PROBLEMS]
        more = len(exc.problems) - len(shown)
        messages.error(
            request,
            "未导入任何内容 Nothing was imported: "
            + "; ".join(shown)
            + (f" (+{more} more)" if more > 0 else ""),
        )
        return back
    if report.written:
        summary = ", ".join(f"{f.filename} +{f.result.created} ~{f.result.updated}" for f in report.written)
        messages.success(request, f"已导入 Imported: {summary}")
    else:
        messages.info(request, "没有变化：这些记忆已经导入过。Nothing changed: this memory was already here.")
    return redirect("browser-character", name=name)
