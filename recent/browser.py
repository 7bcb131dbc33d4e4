"""The memory browser page: the recent window of each character, editable, and the two switches."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET


@require_GET
def memory_browser(request: HttpRequest) -> HttpResponse:
    api_root = reverse("api-review-config").removesuffix("review_config")
    return render(request, "memory_browser.html", {"api_root": api_root})
