"""The memory browser's persona page: entries by section with their evidence and version history, the
corrections queue resolved by hand; add, edit and delete through the same services as the REST API."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Page, Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from nekomem.browser.access import browser_page
from nekomem.browser.layer_views import character_or_404, redirect_back, report_invalid
from nekomem.browser.registry import LayerPage
from nekomem.browser.subjects import subject_filter_context, subject_names
from nekomem.characters.services import Forgotten
from nekomem.errors import Conflict
from persona.api import EntryCreateSerializer, EntryEditSerializer, ResolveSerializer
from persona.models import PersonaEntry
from persona.selectors import (
    persona_corrections_dropped,
    persona_corrections_list,
    persona_entries_archived,
    persona_entries_browse,
    persona_sections,
)
from persona.services import (
    AddOutcome,
    persona_correction_resolve,
    persona_ensure_current,
    persona_entry_create,
    persona_entry_delete,
    persona_entry_edit,
    persona_entry_restore,
)
from persona.services.records import score_of

PAGE_SIZE = 50
CORRECTIONS_PAGE_SIZE = 20

LAYER_PAGE = LayerPage(
    slug="persona",
    title="人格 Persona",
    url_name="browser-persona",
    order=40,
    count=lambda character_id: PersonaEntry.objects.filter(
        character_id=character_id, archive_shard_path__isnull=True
    ).count(),
)

RESOLUTION_DONE = {
    "merge": "已合并 Merged",
    "keep_new": "已采用新观察 Kept the new observation",
    "keep_old": "已保留原条目 Kept the existing entry",
    "keep_both": "两条都保留 Kept both",
}
PROTECTED_REFUSAL = (
    "角色卡条目受保护，不能手动修改或删除；请修改角色卡。"
    "Character-card entries are protected: they change with the card, not by hand."
)


@dataclass(frozen=True)
class EntryRow:
    entry: PersonaEntry
    score: float


@require_GET
@browser_page
def persona_page(request: HttpRequest, name: str) -> HttpResponse:
    character = character_or_404(name)
    persona_ensure_current(character=character)  # the card entries shown are the card's current ones
    subjects = subject_filter_context(request, character.pk)
    subject = subjects["subject"]
    sections = [s.key for s in persona_sections(character_id=character.pk, subject=subject)]
    section = request.GET.get("section", "")
    if section not in sections:
        section = ""
    query = request.GET.get("q", "").strip()
    entries = persona_entries_browse(character_id=character.pk, section=section, query=query, subject=subject)
    page = Paginator(entries, PAGE_SIZE).get_page(request.GET.get("page"))
    pending = persona_corrections_list(character_id=character.pk, subject=subject)
    given_up = persona_corrections_dropped(character_id=character.pk, subject=subject)
    archived = persona_entries_archived(character_id=character.pk, subject=subject)
    shown: dict[str, Page[Any]] = {
        "page": page,
        "corrections": Paginator(pending, CORRECTIONS_PAGE_SIZE).get_page(request.GET.get("cpage")),
        "dropped": Paginator(given_up, CORRECTIONS_PAGE_SIZE).get_page(request.GET.get("dpage")),
        "archived": Paginator(archived, PAGE_SIZE).get_page(request.GET.get("apage")),
    }
    for listed in shown.values():  # each row names its subject ("" for the master's)
        listed.object_list = list(listed.object_list)
        subject_names(listed.object_list, subjects["subjects"])
    now = timezone.now()
    return render(
        request,
        "browser/persona/list.html",
        {
            "character": character,
            "active_tab": LAYER_PAGE.slug,
            **shown,
            "rows": [EntryRow(entry=e, score=score_of(e, now=now)) for e in page.object_list],
            "sections": sections,
            "section": section,
            "query": query,
            "filters": urlencode(
                {k: v for k, v in (("section", section), ("q", query), ("subject", subject)) if v}
            ),
            **subjects,
        },
    )


def _back(request: HttpRequest, name: str) -> HttpResponseRedirect:
    return redirect_back(request, reverse(LAYER_PAGE.url_name, kwargs={"name": name}))


@require_POST
@browser_page
def entry_add(request: HttpRequest, name: str) -> HttpResponse:
    character = character_or_404(name)
    incoming = EntryCreateSerializer(
        data={"entity": request.POST.get("entity", ""), "text": request.POST.get("text", "")}
    )
    if not incoming.is_valid():
        report_invalid(request, incoming)
        return _back(request, name)
    result = persona_entry_create(character_id=character.pk, **incoming.validated_data)
    text = result.entry.text if result.entry is not None else ""
    if result.outcome is AddOutcome.ADDED:
        messages.success(request, f"已添加 Added: {text}")
    elif result.outcome is AddOutcome.ALREADY_HELD:
        messages.info(request, f"已有这一条，未重复添加 Already held: {text}")
    elif result.outcome is AddOutcome.REJECTED_CARD:
        messages.error(
            request, f"与角色卡条目「{text}」矛盾，未添加 Contradicts the card entry 「{text}」; not added"
        )
    else:
        messages.warning(
            request, f"与「{text}」矛盾，已排入待处理矛盾 Contradicts 「{text}」; queued as a correction"
        )
    return _back(request, name)


@require_POST
@browser_page
def entry_edit(request: HttpRequest, name: str, entry_id: str) -> HttpResponse:
    character = character_or_404(name)
    incoming = EntryEditSerializer(data={"text": request.POST.get("text", "")})
    if not incoming.is_valid():
        report_invalid(request, incoming)
        return _back(request, name)
    return _entry_changed(
        request,
        name,
        entry_id,
        lambda: persona_entry_edit(
            character_id=character.pk,
            entry_id=entry_id,
            text=incoming.validated_data["text"],
            with_subjects=True,  # the browser edits the rows it lists, a subject's entries too
        ),
        done="已保存 Saved",
    )


@require_POST
@browser_page
def entry_delete(request: HttpRequest, name: str, entry_id: str) -> HttpResponse:
    character = character_or_404(name)
    return _entry_changed(
        request,
        name,
        entry_id,
        lambda: persona_entry_delete(character_id=character.pk, entry_id=entry_id, with_subjects=True),
        done="已删除 Deleted",
    )


@require_POST
@browser_page
def entry_restore(request: HttpRequest, name: str, entry_id: str) -> HttpResponse:
    character = character_or_404(name)
    try:
        entry = persona_entry_restore(character_id=character.pk, entry_id=entry_id)
    except PersonaEntry.DoesNotExist:
        messages.error(request, f"没有这个条目 No such entry: {entry_id}")
    except Conflict:
        messages.error(request, f"这个条目没有归档 The entry is not archived: {entry_id}")
    else:
        messages.success(request, f"已恢复 Restored: {entry.text}")
    return _back(request, name)


def _entry_changed(
    request: HttpRequest, name: str, entry_id: str, change: Callable[[], object], *, done: str
) -> HttpResponse:
    """Run one entry change; an unknown or card entry is refused with a message and nothing written."""
    try:
        result = change()
    except PersonaEntry.DoesNotExist:
        messages.error(request, f"没有这个条目 No such entry: {entry_id}")
    except Conflict:
        messages.error(request, PROTECTED_REFUSAL)
    else:
        removed = f" ({result.summary()})" if isinstance(result, Forgotten) else ""
        messages.success(request, f"{done}: {entry_id}{removed}")
    return _back(request, name)


@require_POST
@browser_page
def correction_resolve(request: HttpRequest, name: str, pk: int) -> HttpResponse:
    character = character_or_404(name)
    incoming = ResolveSerializer(
        data={"action": request.POST.get("action", ""), "text": request.POST.get("text", "")}
    )
    if not incoming.is_valid():
        report_invalid(request, incoming)
        return _back(request, name)
    action = incoming.validated_data["action"]
    try:
        entry = persona_correction_resolve(
            character_id=character.pk, correction_pk=pk, action=action, text=incoming.validated_data["text"]
        )
    except Conflict as exc:
        messages.error(request, f"操作被拒绝 Refused: {exc}")
    else:
        shown = f": {entry.text}" if entry is not None else ""
        messages.success(request, f"{RESOLUTION_DONE[action]}{shown}")
    return _back(request, name)
