"""The memory browser's reflections page: every reflection with its evidence, sources and surfaced
history; confirm, deny, archive, restore and edit through the same services as the REST API."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
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
from nekomem.characters.models import Character
from nekomem.characters.services import Forgotten
from nekomem.errors import Conflict
from reflections.api import ReflectionEditSerializer
from reflections.models import Reflection, SurfacedReflection
from reflections.selectors import reflection_browse, source_fact_texts, surfaced_by_reflection
from reflections.services import (
    reflection_archive,
    reflection_confirm,
    reflection_delete,
    reflection_deny,
    reflection_edit,
    reflection_restore,
)
from reflections.services.records import score_of

PAGE_SIZE = 50
ARCHIVED_CHOICES = {"yes": True, "no": False}

LAYER_PAGE = LayerPage(
    slug="reflections",
    title="反思 Reflections",
    url_name="browser-reflections",
    order=30,
    count=lambda character_id: Reflection.objects.filter(character_id=character_id).count(),
)

# verb → (service, what the message says was done); a group-chat subject's reflection is only edited or
# deleted here (its lifecycle is the scoped paths'), so only delete reaches subjects' rows.
ACTIONS: dict[str, tuple[Callable[..., object], str]] = {
    "confirm": (reflection_confirm, "已确认 Confirmed"),
    "deny": (reflection_deny, "已否定 Denied"),
    "archive": (reflection_archive, "已归档 Archived"),
    "restore": (reflection_restore, "已恢复为待确认 Restored as pending"),
    "delete": (reflection_delete, "已删除 Deleted"),
}


@dataclass(frozen=True)
class SourceFact:
    fact_id: str
    text: str | None  # None: the fact is no longer stored
    url: str


@dataclass(frozen=True)
class ReflectionRow:
    reflection: Reflection
    score: float
    sources: list[SourceFact]
    surfaced: list[SurfacedReflection]


def _rows(character: Character, page: Page[Reflection], now: datetime) -> list[ReflectionRow]:
    reflections = list(page.object_list)
    texts = source_fact_texts(
        character_id=character.pk, fact_ids=(fid for r in reflections for fid in r.source_fact_ids)
    )
    surfaced = surfaced_by_reflection(
        character_id=character.pk, reflection_ids=(r.reflection_id for r in reflections)
    )
    facts_page = reverse("browser-character", kwargs={"name": character.name}) + "facts/?"
    return [
        ReflectionRow(
            reflection=reflection,
            score=score_of(reflection, now=now),
            sources=[
                SourceFact(fact_id=fid, text=texts.get(fid), url=facts_page + urlencode({"q": fid}))
                for fid in reflection.source_fact_ids
            ],
            surfaced=surfaced.get(reflection.reflection_id, []),
        )
        for reflection in reflections
    ]


@require_GET
@browser_page
def reflections_page(request: HttpRequest, name: str) -> HttpResponse:
    character = character_or_404(name)
    status = request.GET.get("status", "")
    if status not in Reflection.Status.values:
        status = ""
    archived = request.GET.get("archived", "")
    if archived not in ARCHIVED_CHOICES:
        archived = ""
    query = request.GET.get("q", "").strip()
    subjects = subject_filter_context(request, character.pk)
    reflections = reflection_browse(
        character_id=character.pk,
        status=status or None,
        archived=ARCHIVED_CHOICES.get(archived),
        query=query,
        subject=subjects["subject"],
    )
    page = Paginator(reflections, PAGE_SIZE).get_page(request.GET.get("page"))
    page.object_list = list(page.object_list)
    subject_names(page.object_list, subjects["subjects"])
    kept = {
        k: v
        for k, v in (
            ("status", status),
            ("archived", archived),
            ("q", query),
            ("subject", subjects["subject"]),
        )
        if v
    }
    return render(
        request,
        "browser/reflections/list.html",
        {
            "character": character,
            "active_tab": LAYER_PAGE.slug,
            "page": page,
            "rows": _rows(character, page, timezone.now()),
            "statuses": Reflection.Status.values,
            "status": status,
            "archived": archived,
            "query": query,
            "filters": urlencode(kept),
            **subjects,
        },
    )


def _back(request: HttpRequest, name: str) -> HttpResponseRedirect:
    return redirect_back(request, reverse(LAYER_PAGE.url_name, kwargs={"name": name}))


@require_POST
@browser_page
def reflection_act(request: HttpRequest, name: str, reflection_id: str, verb: str) -> HttpResponse:
    character = character_or_404(name)
    service, done = ACTIONS[verb]
    reach = {"with_subjects": True} if verb == "delete" else {}
    return _acted(
        request,
        name,
        reflection_id,
        lambda: service(character_id=character.pk, reflection_id=reflection_id, **reach),
        done,
    )


@require_POST
@browser_page
def reflection_edit_text(request: HttpRequest, name: str, reflection_id: str) -> HttpResponse:
    character = character_or_404(name)
    incoming = ReflectionEditSerializer(data={"text": request.POST.get("text", "")})
    if not incoming.is_valid():
        report_invalid(request, incoming)
        return _back(request, name)
    text = incoming.validated_data["text"]
    return _acted(
        request,
        name,
        reflection_id,
        lambda: reflection_edit(
            character_id=character.pk, reflection_id=reflection_id, text=text, with_subjects=True
        ),
        "已保存 Saved",
    )


def _acted(
    request: HttpRequest, name: str, reflection_id: str, change: Callable[[], object], done: str
) -> HttpResponse:
    """Run one change; an unknown reflection or a refused transition writes nothing and says why."""
    try:
        result = change()
    except Reflection.DoesNotExist:
        messages.error(request, f"没有这条反思 No such reflection: {reflection_id}")
    except Conflict as exc:
        messages.error(request, f"操作被拒绝 Refused: {exc}")
    else:
        removed = f" ({result.summary()})" if isinstance(result, Forgotten) else ""
        messages.success(request, f"{done}: {reflection_id}{removed}")
    return _back(request, name)
