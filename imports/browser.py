"""The memory browser's import panel: upload an OpenClaw or Hermes workspace zip, preview what will be
added, then import it through the same service as ``/internal/memory/import_external_markdown``."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from imports.services.external_import import (
    SOURCE_FORMATS,
    ImportBadInput,
    ImportTooLarge,
    external_markdown_import,
    import_request_parse,
)
from imports.services.markdown_workspace import workspace_read
from nekomem.browser.access import browser_page
from nekomem.browser.layer_views import character_or_404
from nekomem.llm import LLMUnavailable

TEMPLATE = "browser/imports/import.html"


def _preview(request: HttpRequest, context: dict[str, Any]) -> None:
    upload = request.FILES.get("workspace")
    source_format = request.POST.get("source_format") or "openclaw"
    if upload is None or source_format not in SOURCE_FORMATS:
        messages.error(request, "请选择工作区 zip 文件。Choose a workspace zip file.")
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "workspace.zip"
        with path.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        try:
            ws = workspace_read(path=path, source_format=source_format)
        except ImportBadInput as exc:
            messages.error(request, f"无法读取 Cannot read: {exc}")
            return
    context.update(
        workspace=ws,
        persona_rows=[c for c in ws.candidates if c["target"] == "persona"],
        fact_rows=[c for c in ws.candidates if c["target"] == "facts"],
        payload=json.dumps(
            {
                "source_format": ws.source_format,
                "imported_files": ws.imported_files,
                "candidates": ws.candidates,
                "warning_count": len(ws.warnings),
            },
            ensure_ascii=False,
        ),
    )


def _import(request: HttpRequest, context: dict[str, Any], name: str) -> None:
    try:
        body = json.loads(request.POST.get("payload") or "")
        if not isinstance(body, dict):
            raise ImportBadInput("the preview was lost; upload the workspace again")
        body["character_name"] = name
        report = external_markdown_import(request=import_request_parse(body=body))
    except (ValueError, ImportBadInput, ImportTooLarge) as exc:
        messages.error(request, f"导入失败 Import failed: {exc}")
        return
    except LLMUnavailable:
        messages.error(request, "没有可用的 LLM。No LLM provider is configured.")
        return
    context["report"] = report
    if report.partial:
        messages.warning(
            request,
            "部分人设未能融合，可再次导入（不会重复添加）。Some persona lines could not be fused; "
            "import again (nothing is added twice).",
        )


@require_http_methods(["GET", "POST"])
@browser_page
def markdown_import_panel(request: HttpRequest, name: str) -> HttpResponse:
    character = character_or_404(name)
    context: dict[str, Any] = {"character": character, "active_tab": "recall", "formats": SOURCE_FORMATS}
    if request.method == "POST":
        if request.POST.get("action") == "import":
            _import(request, context, character.name)
        else:
            _preview(request, context)
    return render(request, TEMPLATE, context)
