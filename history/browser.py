"""The memory browser's history pages (issue 49): a character's timeline of changes, where one action
undoes a whole pass, job, request or import; a row's versions as a readable diff with "restore this
version"; and the memory as it stood at a chosen time. They call the same services as the REST API."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from history.selectors import Version, changes_list, layer_as_of, row_versions
from history.services import HistoryRefused, NoSuchVersion, changes_undo, row_restore
from nekomem.browser.access import browser_page
from nekomem.browser.layer_views import character_or_404
from nekomem.journal.causes import CAUSES
from nekomem.journal.registry import history_layer, history_layers
from nekomem.language.codes import supported_language
from nekomem.language.resolution import resolve_language
from nekomem.language.tables import load_locale_tables

_TEXT = load_locale_tables("history.locales")


def history_language(request: HttpRequest) -> str:
    """The pages' language, as the Knowledge page picks its own: the page's ``lang``, else the browser's
    (Accept-Language), else the server's."""
    chosen = supported_language(request.POST.get("lang") or request.GET.get("lang"))
    if chosen:
        return chosen
    for part in request.META.get("HTTP_ACCEPT_LANGUAGE", "").split(","):
        accepted = supported_language(part.split(";")[0].strip())
        if accepted:
            return accepted
    return resolve_language()


def _text(request: HttpRequest) -> dict[str, str]:
    return _TEXT[history_language(request)]


CHANGES_PER_PAGE = 50
AS_OF_ROWS = 200
FILTERS = ("layer", "cause", "since", "until")
# Fields a diff leaves out: bookkeeping that changes with every write and says nothing to a person.
QUIET_FIELDS = frozenset(
    {"hash", "updated_at", "token_count", "token_count_text_sha256", "token_count_tokenizer"}
)


class ChangeFilterForm(forms.Form):
    layer = forms.CharField(max_length=16, required=False)
    cause = forms.ChoiceField(choices=[("", ""), *((c, c) for c in CAUSES)], required=False)
    since = forms.DateTimeField(required=False)
    until = forms.DateTimeField(required=False)
    as_of = forms.DateTimeField(required=False)


def _filters(query: QueryDict) -> dict[str, Any]:
    """The valid filters of a query string (an invalid value is ignored, never an error page)."""
    form = ChangeFilterForm(query)
    form.is_valid()
    data = getattr(form, "cleaned_data", {})
    return {key: value for key in (*FILTERS, "as_of") if (value := data.get(key))}


def _query(filters: dict[str, Any]) -> str:
    kept = QueryDict(mutable=True)
    for key, value in filters.items():
        kept[key] = value.isoformat() if isinstance(value, datetime) else value
    return kept.urlencode()


@require_GET
@browser_page
def changes_page(request: HttpRequest, name: str) -> HttpResponse:
    character = character_or_404(name)
    filters = _filters(request.GET)
    changes = changes_list(
        character_id=character.pk,
        since=filters.get("since"),
        until=filters.get("until"),
        layer=filters.get("layer"),
        cause=filters.get("cause"),
    )
    page = Paginator(changes, CHANGES_PER_PAGE).get_page(request.GET.get("page"))
    t = _text(request)
    as_of_rows: list[dict[str, Any]] = []
    as_of_layer = history_layer(filters.get("layer") or "facts")
    if filters.get("as_of") and as_of_layer is not None:
        rows = layer_as_of(character_id=character.pk, layer=as_of_layer, at=filters["as_of"])
        as_of_rows = [
            {"id": row_id, "shown": fields.get(as_of_layer.text_key, ""), **fields}
            for row_id, fields in list(rows.items())[:AS_OF_ROWS]
        ]
    return render(
        request,
        "browser/history/changes.html",
        {
            "character": character,
            "active_tab": "history",
            "page": page,
            "filters": filters,
            "filter_query": _query({k: v for k, v in filters.items() if k != "as_of"}),
            "layers": [layer.name for layer in history_layers()],
            "causes": CAUSES,
            "as_of_layer": as_of_layer.name if as_of_layer else "",
            "as_of_rows": as_of_rows,
            "t": t,
            "page_label": t["page"].format(number=page.number, count=page.paginator.num_pages),
        },
    )


@require_POST
@browser_page
def changes_undo_action(request: HttpRequest, name: str) -> HttpResponse:
    """Undo one whole source (a pass, job, request or import) from the timeline."""
    character = character_or_404(name)
    t = _text(request)
    source = request.POST.get("source", "")
    try:
        report = changes_undo(
            character_id=character.pk, source=source, force=request.POST.get("force") == "1"
        )
    except NoSuchVersion:
        messages.error(request, t["no_such_source"].format(source=source))
    else:
        text = t["undid"].format(source=source, restored=len(report.restored), archived=len(report.archived))
        if report.conflicts:
            text += t["left_alone"].format(names=", ".join(c["row_id"] for c in report.conflicts))
        if report.forgotten:
            text += t["not_restored_forgotten"].format(count=len(report.forgotten))
        messages.success(request, text + t["undo_it"].format(source=report.source))
    back = QueryDict(request.POST.get("filters", ""), mutable=True)
    url = reverse("browser-history", kwargs={"name": character.name})
    query = {**_filters(back), **_lang(request)}
    return HttpResponseRedirect(f"{url}?{_query(query)}" if query else url)


def _lang(request: HttpRequest) -> dict[str, str]:
    """The page's own ``lang`` choice, kept across a form's redirect."""
    chosen = supported_language(request.POST.get("lang"))
    return {"lang": chosen} if chosen else {}


def _diffs(versions: list[Version], text_key: str = "text") -> list[dict[str, Any]]:
    """Each version with the fields it changed (before → after), newest first."""
    shown: list[dict[str, Any]] = []
    previous: dict[str, Any] = {}
    for version in versions:
        fields = version.fields or {}
        changed = [
            {"field": key, "before": previous.get(key), "after": fields.get(key)}
            for key in sorted(set(previous) | set(fields))
            if key not in QUIET_FIELDS and previous.get(key) != fields.get(key)
        ]
        shown.append(
            {"version": version, "changed": changed, "forgotten": bool(fields) and not fields.get(text_key)}
        )
        previous = fields
    return list(reversed(shown))


@require_GET
@browser_page
def row_history_page(request: HttpRequest, name: str, layer: str, row_id: str) -> HttpResponse:
    character = character_or_404(name)
    history = history_layer(layer)
    if history is None:
        raise Http404(f"no memory layer {layer!r}")
    versions = row_versions(character_id=character.pk, layer=layer, row_id=row_id)
    return render(
        request,
        "browser/history/row_history.html",
        {
            "character": character,
            "active_tab": "history",
            "layer": layer,
            "row_id": row_id,
            "rows": _diffs(versions, history.text_key),
            "latest": versions[-1].version if versions else 0,
            "conflict": request.GET.get("conflict", ""),
            "t": _text(request),
        },
    )


@require_POST
@browser_page
def row_restore_action(request: HttpRequest, name: str, layer: str, row_id: str) -> HttpResponse:
    character = character_or_404(name)
    if history_layer(layer) is None:
        raise Http404(f"no memory layer {layer!r}")
    t = _text(request)
    asked = request.POST.get("version", "")
    version = int(asked) if asked.isdigit() else 0
    url = reverse("browser-row-history", kwargs={"name": character.name, "layer": layer, "row_id": row_id})
    try:
        row_restore(
            character_id=character.pk,
            layer=layer,
            row_id=row_id,
            version=version,
            force=request.POST.get("force") == "1",
        )
    except NoSuchVersion:
        messages.error(request, t["no_version"].format(version=version))
    except HistoryRefused as refused:
        if refused.reason == "edited_since":
            messages.error(request, t["edited_since"].format(version=version))
            return HttpResponseRedirect(f"{url}?{_query({'conflict': str(version), **_lang(request)})}")
        messages.error(request, t["version_forgotten"].format(version=version))
    else:
        messages.success(request, t["restored"].format(version=version))
    return HttpResponseRedirect(f"{url}?{_query(_lang(request))}" if _lang(request) else url)
