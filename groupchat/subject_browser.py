"""Forgetting a whole group-chat subject from the memory browser: the ``scoped_forget`` service the QQ
plugin calls, posted from the subject filter of any layer page; the counts of what went are shown."""

from __future__ import annotations

import logging

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from groupchat.services import scoped_forget
from nekomem.browser.access import browser_page
from nekomem.browser.layer_views import character_or_404, redirect_back
from nekomem.subjects import KEY_MAX, SUBJECT_KINDS, Subject

logger = logging.getLogger(__name__)


class SubjectForgetForm(forms.Form):
    subject_key = forms.CharField(max_length=KEY_MAX)

    def clean_subject_key(self) -> str:
        key: str = self.cleaned_data["subject_key"]
        kind, _, subject_id = key.partition(":")
        if kind not in SUBJECT_KINDS or not subject_id:
            raise forms.ValidationError(f"not a subject key: {key!r}")
        return key


@require_POST
@browser_page
def subject_forget(request: HttpRequest, name: str) -> HttpResponse:
    character = character_or_404(name)
    form = SubjectForgetForm(request.POST)
    # Back to the page the form was on, with the private view (the subject is gone).
    listing = reverse("browser-character", kwargs={"name": name})
    if not form.is_valid():
        problems = "; ".join(str(e) for errors in form.errors.values() for e in errors)
        messages.error(request, f"未修改：输入无效 Nothing changed, invalid input: {problems}")
        return redirect_back(request, listing)
    key = form.cleaned_data["subject_key"]
    kind, _, subject_id = key.partition(":")
    forgotten = scoped_forget(
        character_id=character.pk, subject=Subject(kind=kind, subject_id=subject_id, scope=key)
    )
    counts = ", ".join(f"{what} {n}" for what, n in forgotten.counts.items() if n)
    logger.info("browser subject_forget %s: %s", name, forgotten.counts)
    messages.success(
        request,
        f"已忘记主体 Subject forgotten: {key} ({counts or '没有可删除的内容 nothing was stored'})",
    )
    return redirect_back(request, listing)
