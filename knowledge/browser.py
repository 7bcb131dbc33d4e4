"""The memory browser's Knowledge page: the packs every character shares, an upload that shows what a
pack would change before it is imported, the import jobs, the entries with a disable switch, and a
query box that shows exactly the block the chat's knowledge tool would get, with each path's rank.

Everything is read through the store's selectors and written through its services, as the
``/internal/knowledge/*`` routes do. A refusal is told in the user's language (the page's ``lang``,
else the browser's ``Accept-Language``, else the server's default), one sentence per reason code.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.encoding import iri_to_uri
from django.views.decorators.http import require_GET, require_POST

from knowledge import selectors, services
from knowledge.packs import MATERIAL_TYPES, MAX_PACK_BYTES, PackRejected
from knowledge.preview import knowledge_pack_preview
from knowledge.services import KnowledgeRefused
from nekomem.browser.access import browser_page
from nekomem.language.codes import SUPPORTED_LANGUAGES, supported_language
from nekomem.language.resolution import resolve_language
from nekomem.language.tables import load_locale_tables

ENTRIES_PER_PAGE = 50
MAX_ENTRY_OFFSET = 20_000
QUERY_MODES = ("lookup", "sample")
QUERY_MATERIAL_TYPES = ("auto", "knowledge", "corpus")
# The chat's own query: what the main server sends (reference §1.8), so the block is the one it gets.
CHAT_BUDGET_MS = 2000
# Columns of the query box's rank table, in this order.
PATH_LABELS = {"exact": "精确 Exact", "bm25": "BM25", "vector": "向量 Vector"}

_TEXT = load_locale_tables("knowledge.browser_locales")


def page_language(request: HttpRequest) -> str:
    """The language refusals are told in: the page's choice, else the browser's, else the server's."""
    chosen = supported_language(request.POST.get("lang") or request.GET.get("lang"))
    if chosen:
        return chosen
    for part in request.META.get("HTTP_ACCEPT_LANGUAGE", "").split(","):
        accepted = supported_language(part.split(";")[0].strip())
        if accepted:
            return accepted
    return resolve_language()


def reason_text(reason: str, language: str) -> str:
    """One plain sentence for a refusal's reason code."""
    table = _TEXT[language]
    return table["reasons"].get(reason) or table["unknown_reason"].format(reason=reason)


def _back(request: HttpRequest, language: str) -> HttpResponseRedirect:
    """Back to the page the form was on (the ``next`` field, only ever inside the Knowledge page)."""
    page = reverse("browser-knowledge")
    wanted = iri_to_uri(request.POST.get("next", ""))
    if wanted.startswith(page):
        return HttpResponseRedirect(wanted)
    return HttpResponseRedirect(f"{page}?{urlencode({'lang': language})}")


def _refused(request: HttpRequest, reason: str, language: str) -> None:
    messages.error(request, f"{reason_text(reason, language)} ({reason})")


class EntryFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, strip=True)
    pack = forms.CharField(required=False, max_length=64, strip=True)
    offset = forms.IntegerField(required=False, min_value=0, max_value=MAX_ENTRY_OFFSET)


class AskForm(forms.Form):
    ask = forms.CharField(required=False, max_length=2000, strip=True)
    mode = forms.ChoiceField(required=False, choices=[(m, m) for m in QUERY_MODES])
    material_type = forms.ChoiceField(required=False, choices=[(t, t) for t in QUERY_MATERIAL_TYPES])
    limit = forms.IntegerField(required=False, min_value=1, max_value=10)


def _stamped(row: dict[str, Any], *fields: str) -> dict[str, Any]:
    """``row`` with its ISO time fields (as the routes answer them) as datetimes, for the template."""
    return {
        **row,
        **{name: datetime.fromisoformat(row[name]) if row.get(name) else None for name in fields},
    }


def _hit_rows(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """Each hit with its rank on every path (None where it did not come through that path)."""
    ranks = answer.get("ranks") or []
    return [
        {**hit, "path_ranks": [(ranks[at] if at < len(ranks) else {}).get(path) for path in PATH_LABELS]}
        for at, hit in enumerate(answer["hits"])
    ]


@require_GET
@browser_page
def knowledge_page(request: HttpRequest) -> HttpResponse:
    language = page_language(request)
    filters = EntryFilterForm(request.GET)
    chosen = filters.cleaned_data if filters.is_valid() else {}
    offset = chosen.get("offset") or 0
    entries = selectors.knowledge_entries_list(
        query=chosen.get("q") or "", pack_id=chosen.get("pack") or "", limit=ENTRIES_PER_PAGE, offset=offset
    )
    asked = AskForm(request.GET)
    ask = asked.cleaned_data if asked.is_valid() else {}
    answer: dict[str, Any] | None = None
    if ask.get("ask"):
        answer = services.knowledge_query(
            query=ask["ask"],
            limit=ask.get("limit") or 3,
            budget_ms=CHAT_BUDGET_MS,
            mode=ask.get("mode") or "lookup",
            material_type=ask.get("material_type") or "auto",
            language=language,
            explain=True,
        )
        answer = {**answer, "hits": _hit_rows(answer)}
    jobs = [
        {
            **_stamped(job, "created_at", "updated_at"),
            "reason_text": reason_text(job["reason"], language) if job.get("reason") else "",
        }
        for job in selectors.knowledge_jobs_list()
    ]
    status = selectors.knowledge_status()
    return render(
        request,
        "browser/knowledge/page.html",
        {
            "active_page": "knowledge",
            "language": language,
            "languages": SUPPORTED_LANGUAGES,
            "language_query": urlencode({"lang": language}),
            "status": status,
            "status_problem": reason_text(status["error_code"], language) if status.get("error_code") else "",
            "packs": [
                _stamped(pack, "installed_at", "updated_at")
                for pack in (selectors.knowledge_packs_list() if status.get("ready") else [])
            ],
            "jobs": jobs,
            "entries": entries,
            "entry_query": chosen.get("q") or "",
            "entry_pack": chosen.get("pack") or "",
            "entries_from": offset + 1,
            "entries_to": offset + len(entries["items"]),
            "previous_offset": max(offset - ENTRIES_PER_PAGE, 0) if offset > 0 else None,
            "next_offset": offset + ENTRIES_PER_PAGE,
            "back": request.get_full_path(),
            "ask": {
                "query": ask.get("ask") or "",
                "mode": ask.get("mode") or "lookup",
                "material_type": ask.get("material_type") or "auto",
                "limit": ask.get("limit") or 3,
            },
            "answer": answer,
            "query_modes": QUERY_MODES,
            "query_types": QUERY_MATERIAL_TYPES,
            "rank_columns": list(PATH_LABELS.items()),
        },
    )


def _uploaded_pack(request: HttpRequest) -> bytes | str:
    """The chosen file's bytes, or the reason code it is refused with before it is read."""
    uploads = request.FILES.getlist("pack")
    if len(uploads) != 1:
        return "invalid_request"
    upload = uploads[0]
    if upload.size is not None and upload.size > MAX_PACK_BYTES:
        return "pack_too_large"
    return upload.read()


@require_POST
@browser_page
def knowledge_preview(request: HttpRequest) -> HttpResponse:
    """What the chosen file would add, change and remove; nothing is stored."""
    language = page_language(request)
    raw = _uploaded_pack(request)
    context: dict[str, Any] = {"language": language}
    if isinstance(raw, str):
        context["refusal"] = {"reason": raw, "text": reason_text(raw, language), "detail": ""}
    else:
        try:
            context["preview"] = knowledge_pack_preview(raw=raw)
        except PackRejected as exc:
            context["refusal"] = {
                "reason": exc.reason,
                "text": reason_text(exc.reason, language),
                "detail": exc.detail,
            }
    return render(request, "browser/knowledge/preview.html", context)


@require_POST
@browser_page
def knowledge_import(request: HttpRequest) -> HttpResponse:
    language = page_language(request)
    raw = _uploaded_pack(request)
    if isinstance(raw, str):
        _refused(request, raw, language)
        return _back(request, language)
    try:
        outcome = services.knowledge_import_submit(raw=raw)
    except KnowledgeRefused as refused:
        outcome = {"ok": False, "reason": refused.reason}
    if not outcome["ok"]:
        _refused(request, outcome["reason"], language)
    elif outcome.get("unchanged"):
        messages.info(request, f"{outcome['pack_id']}: 与已安装的版本相同 identical to the installed version")
    else:
        messages.success(request, f"{outcome['pack_id']}: 已开始导入 import queued (job {outcome['job_id']})")
    return _back(request, language)


def _flag(request: HttpRequest, name: str) -> bool | None:
    return {"true": True, "false": False}.get(request.POST.get(name, ""))


def _attempt(request: HttpRequest, language: str, write: Callable[[], object], done: str) -> None:
    """Run one service write; say what was done, or why it was refused in the user's language."""
    try:
        outcome = write()
    except KnowledgeRefused as refused:
        _refused(request, refused.reason, language)
        return
    if outcome is False:  # cancel / discard of a job that is past that point or gone
        _refused(request, "not_found", language)
        return
    messages.success(request, done)


@require_POST
@browser_page
def knowledge_settings(request: HttpRequest) -> HttpResponse:
    language = page_language(request)
    enabled = _flag(request, "enabled")
    if enabled is None:
        _refused(request, "invalid_request", language)
    else:
        _attempt(
            request,
            language,
            lambda: services.knowledge_enabled_set(enabled=enabled),
            "公共知识已开启 Knowledge on" if enabled else "公共知识已关闭 Knowledge off",
        )
    return _back(request, language)


JOB_ACTIONS = {
    "cancel": (services.knowledge_import_cancel, "已取消导入 Import cancelled"),
    "discard": (services.knowledge_import_discard, "已移出列表 Job discarded"),
}


@require_POST
@browser_page
def knowledge_job_action(request: HttpRequest, action: str) -> HttpResponse:
    if action not in JOB_ACTIONS:
        raise Http404(action)
    language = page_language(request)
    job_id = request.POST.get("job_id", "").strip()
    write, done = JOB_ACTIONS[action]
    if not job_id:
        _refused(request, "invalid_request", language)
    else:
        _attempt(request, language, lambda: write(job_id=job_id), done)
    return _back(request, language)


PACK_ACTIONS = ("material-type", "auto-context", "index-policy", "remove")


def _pack_write(request: HttpRequest, action: str, pack_id: str) -> tuple[Callable[[], object], str] | None:
    """The service call a pack form asks for and what to say once it is done; None for bad input."""
    if action == "remove":
        return lambda: services.knowledge_pack_remove(pack_id=pack_id), f"已移除 Removed {pack_id}"
    if action == "material-type":
        material_type = request.POST.get("material_type", "") or None
        if material_type not in (None, *MATERIAL_TYPES):
            return None
        return (
            lambda: services.knowledge_pack_material_type_set(pack_id=pack_id, material_type=material_type),
            f"{pack_id}: 类型 type {material_type or '按包声明 as declared'}",
        )
    enabled = _flag(request, "enabled")
    if enabled is None:
        return None
    state = "开 on" if enabled else "关 off"
    if action == "auto-context":
        return (
            lambda: services.knowledge_pack_auto_context_set(pack_id=pack_id, enabled=enabled),
            f"{pack_id}: 自动上下文 auto context {state}",
        )
    return (
        lambda: services.knowledge_pack_local_embedding_set(pack_id=pack_id, enabled=enabled),
        f"{pack_id}: 本地向量 local embedding {state}",
    )


@require_POST
@browser_page
def knowledge_pack_action(request: HttpRequest, action: str) -> HttpResponse:
    if action not in PACK_ACTIONS:
        raise Http404(action)
    language = page_language(request)
    pack_id = request.POST.get("pack_id", "").strip()
    write = _pack_write(request, action, pack_id) if pack_id else None
    if write is None:
        _refused(request, "invalid_request", language)
    else:
        _attempt(request, language, *write)
    return _back(request, language)


@require_POST
@browser_page
def knowledge_entry_disabled(request: HttpRequest) -> HttpResponse:
    language = page_language(request)
    pack_id = request.POST.get("pack_id", "").strip()
    title = request.POST.get("title", "")
    disabled = _flag(request, "disabled")
    if not pack_id or not title or disabled is None:
        _refused(request, "invalid_request", language)
    else:
        _attempt(
            request,
            language,
            lambda: services.knowledge_entry_disabled_set(pack_id=pack_id, title=title, disabled=disabled),
            f"{title}: {'已停用 disabled' if disabled else '已启用 enabled'}",
        )
    return _back(request, language)


@require_GET
@browser_page
def knowledge_entry_page(request: HttpRequest) -> HttpResponse:
    language = page_language(request)
    entry = selectors.knowledge_entry_get(
        pack_id=request.GET.get("pack_id", ""), title=request.GET.get("title", "")
    )
    if entry is None:
        raise Http404("no such knowledge entry")
    return render(
        request,
        "browser/knowledge/entry.html",
        {"active_page": "knowledge", "entry": entry, "language": language, "back": request.get_full_path()},
    )
