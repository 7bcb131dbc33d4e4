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

from nekomem.browser.access import browser_page
from nekomem.browser.layer_views import character_or_404
from nekomem.journal.causes import CAUSES
from nekomem.journal.history_selectors import Version, changes_list, layer_as_of, row_versions
from nekomem.journal.history_services import HistoryRefused, NoSuchVersion, changes_undo, row_restore
from nekomem.journal.registry import history_layer, history_layers

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
    as_of_rows: list[dict[str, Any]] = []
    as_of_layer = history_layer(filters.get("layer") or "facts")
    if filters.get("as_of") and as_of_layer is not None:
        rows = layer_as_of(character_id=character.pk, layer=as_of_layer, at=filters["as_of"])
        as_of_rows = [{"id": row_id, **fields} for row_id, fields in list(rows.items())[:AS_OF_ROWS]]
    return render(
        request,
        "browser/journal/changes.html",
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
        },
    )


@require_POST
@browser_page
def changes_undo_action(request: HttpRequest, name: str) -> HttpResponse:
    """Undo one whole source (a pass, job, request or import) from the timeline."""
    character = character_or_404(name)
    source = request.POST.get("source", "")
    try:
        report = changes_undo(
            character_id=character.pk, source=source, force=request.POST.get("force") == "1"
        )
    except NoSuchVersion:
        messages.error(request, f"没有来源为 {source} 的改动 No change has the source {source}")
    else:
        text = (
            f"已撤销 {source}：恢复 {len(report.restored)} 行，归档 {len(report.archived)} 行 "
            f"Undid {source}: {len(report.restored)} rows restored, {len(report.archived)} archived"
        )
        if report.conflicts:
            names = ", ".join(c["row_id"] for c in report.conflicts)
            text += f"；之后又被改过、未动 left alone, changed again since: {names}"
        if report.forgotten:
            text += f"；已遗忘的未恢复 forgotten, not restored: {len(report.forgotten)}"
        messages.success(request, text + f" (撤销它 undo it: {report.source})")
    back = QueryDict(request.POST.get("filters", ""))
    url = reverse("browser-history", kwargs={"name": character.name})
    return HttpResponseRedirect(f"{url}?{_query(_filters(back))}" if back else url)


def _diffs(versions: list[Version]) -> list[dict[str, Any]]:
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
            {"version": version, "changed": changed, "forgotten": bool(fields) and not fields.get("text")}
        )
        previous = fields
    return list(reversed(shown))


@require_GET
@browser_page
def row_history_page(request: HttpRequest, name: str, layer: str, row_id: str) -> HttpResponse:
    character = character_or_404(name)
    if history_layer(layer) is None:
        raise Http404(f"no memory layer {layer!r}")
    versions = row_versions(character_id=character.pk, layer=layer, row_id=row_id)
    return render(
        request,
        "browser/journal/row_history.html",
        {
            "character": character,
            "active_tab": "history",
            "layer": layer,
            "row_id": row_id,
            "rows": _diffs(versions),
            "latest": versions[-1].version if versions else 0,
            "conflict": request.GET.get("conflict", ""),
        },
    )


@require_POST
@browser_page
def row_restore_action(request: HttpRequest, name: str, layer: str, row_id: str) -> HttpResponse:
    character = character_or_404(name)
    if history_layer(layer) is None:
        raise Http404(f"no memory layer {layer!r}")
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
        messages.error(request, f"没有版本 {version} No version {version}")
    except HistoryRefused as refused:
        if refused.reason == "edited_since":
            messages.error(
                request,
                f"版本 {version} 之后有人手动改过这一行，未恢复 Changed by hand after version {version}; "
                "not restored (confirm below to overwrite)",
            )
            return HttpResponseRedirect(f"{url}?conflict={version}")
        messages.error(
            request, f"版本 {version} 已被遗忘，不能恢复 Version {version} was forgotten; not restored"
        )
    else:
        messages.success(request, f"已恢复到版本 {version} Restored version {version}")
    return HttpResponseRedirect(url)
