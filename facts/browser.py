"""The facts page of the memory browser: a character's facts, filtered and paginated, edited through
the services the REST API calls, and the near-duplicate pairs waiting for arbitration."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from facts.models import Fact
from facts.selectors import dedup_pairs_pending, dedup_pairs_pending_count, facts_browse
from facts.services import fact_archive, fact_delete, fact_restore, fact_update
from nekomem.browser.access import browser_page
from nekomem.browser.layer_views import character_or_404
from nekomem.browser.subjects import subject_filter_context, subject_names
from nekomem.characters.services import Forgotten

FACTS_PER_PAGE = 50
PAIRS_SHOWN = 50

STATUS_CHOICES = [
    ("active", "活跃 Active"),
    ("absorbed", "已吸收 Absorbed"),
    ("archived", "已归档 Archived"),
]


class FactFilterForm(forms.Form):
    q = forms.CharField(required=False, max_length=200)
    entity = forms.ChoiceField(required=False, choices=[("", "全部 All"), *Fact.Entity.choices])
    status = forms.ChoiceField(required=False, choices=[("", "全部 All"), *STATUS_CHOICES])
    importance = forms.IntegerField(required=False, min_value=1, max_value=10)


class FactActionForm(forms.Form):
    fact_id = forms.CharField(max_length=80)


class FactEditForm(FactActionForm):
    text = forms.CharField()
    importance = forms.IntegerField(min_value=1, max_value=10)
    entity = forms.ChoiceField(choices=Fact.Entity.choices)


def _form_errors(form: forms.Form) -> str:
    return "; ".join(f"{field}: {' '.join(map(str, errors))}" for field, errors in form.errors.items())


@require_GET
@browser_page
def facts_page(request: HttpRequest, name: str) -> HttpResponse:
    character = character_or_404(name)
    filters = FactFilterForm(request.GET)
    if not filters.is_valid():
        messages.error(request, f"筛选条件无效，已忽略 Invalid filter, ignored: {_form_errors(filters)}")
    chosen = filters.cleaned_data
    subjects = subject_filter_context(request, character.pk)
    facts = facts_browse(
        character_id=character.pk,
        text=chosen.get("q") or "",
        entity=chosen.get("entity") or None,
        status=chosen.get("status") or None,
        min_importance=chosen.get("importance"),
        subject=subjects["subject"],
    )
    page = Paginator(facts, FACTS_PER_PAGE).get_page(request.GET.get("page"))
    page.object_list = list(page.object_list)
    subject_names(page.object_list, subjects["subjects"])
    return render(
        request,
        "browser/facts/page.html",
        {
            "character": character,
            "active_tab": "facts",
            "filters": filters,
            "page": page,
            **subjects,
            "entities": Fact.Entity.choices,
            "back": request.GET.urlencode(),
            "pairs": dedup_pairs_pending(character_id=character.pk, limit=PAIRS_SHOWN),
            "pairs_waiting": dedup_pairs_pending_count(character_id=character.pk),
        },
    )


# The browser acts on the rows it lists, a group-chat subject's facts too (``with_subjects``).


def _edit(character_id: int, data: dict[str, Any]) -> None:
    fact_update(
        character_id=character_id,
        fact_id=data["fact_id"],
        text=data["text"],
        importance=data["importance"],
        entity=data["entity"],
        with_subjects=True,
    )


def _delete(character_id: int, data: dict[str, Any]) -> Forgotten:
    forgotten = fact_delete(character_id=character_id, fact_id=data["fact_id"], with_subjects=True)
    if forgotten is None:
        raise Fact.DoesNotExist
    return forgotten


def _archive(character_id: int, data: dict[str, Any]) -> None:
    fact_archive(character_id=character_id, fact_id=data["fact_id"], with_subjects=True)


def _restore(character_id: int, data: dict[str, Any]) -> None:
    fact_restore(character_id=character_id, fact_id=data["fact_id"], with_subjects=True)


@dataclass(frozen=True)
class FactAction:
    form: type[FactActionForm]
    # One service call; Fact.DoesNotExist or ValueError refuse. A deletion returns what it removed.
    run: Callable[[int, dict[str, Any]], Forgotten | None]
    done: str  # the message of success, before the fact's id


# Each is POSTed to /browse/<name>/facts/<action>/ (browser_urls.py).
FACT_ACTIONS = {
    "edit": FactAction(FactEditForm, _edit, "已保存 Saved"),
    "delete": FactAction(FactActionForm, _delete, "已删除 Deleted"),
    "archive": FactAction(FactActionForm, _archive, "已归档 Archived"),
    "restore": FactAction(FactActionForm, _restore, "已恢复 Restored"),
}


@require_POST
@browser_page
def fact_action(request: HttpRequest, name: str, action: str) -> HttpResponse:
    """Run one action on one fact and send the browser back to the list it came from with a message;
    bad input changes nothing."""
    character = character_or_404(name)
    chosen = FACT_ACTIONS[action]
    form = chosen.form(request.POST)
    if not form.is_valid():
        messages.error(request, f"未修改：输入无效 Nothing changed, invalid input: {_form_errors(form)}")
    else:
        fact_id = form.cleaned_data["fact_id"]
        try:
            forgotten = chosen.run(character.pk, form.cleaned_data)
        except Fact.DoesNotExist:
            messages.error(request, f"未修改：没有这条事实 Nothing changed, no such fact: {fact_id}")
        except ValueError as exc:
            messages.error(request, f"未修改 Nothing changed: {exc}")
        else:
            removed = f" ({forgotten.summary()})" if forgotten is not None else ""
            messages.success(request, f"{chosen.done}: {fact_id}{removed}")
    # ``back`` is the list's query string (filters, page): the answer lands where the action was taken.
    back = QueryDict(request.POST.get("back", "")).urlencode()
    return redirect(reverse("browser-facts", kwargs={"name": name}) + (f"?{back}" if back else ""))
