"""The front door (``/``) and a character's overview page."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from nekomem.browser.access import browser_page
from nekomem.browser.layer_views import character_or_404
from nekomem.browser.registry import layer_pages
from nekomem.characters.models import Character
from nekomem.characters.selectors import character_list
from nekomem.runtime.status import status_snapshot


def layer_counts(character: Character) -> list[tuple[str, int | None]]:
    """(title, rows) of each registered layer for ``character``, in tab order."""
    return [(page.title, page.count(character.pk) if page.count else None) for page in layer_pages()]


@require_GET
@browser_page
def front_door(request: HttpRequest) -> HttpResponse:
    characters = [(character, layer_counts(character)) for character in character_list()]
    pages = layer_pages()
    return render(
        request,
        "browser/front_door.html",
        {
            "characters": characters,
            "pages": pages,
            # A template would call ``page.count`` (a callable) instead of testing it: decided here.
            "counted_pages": [page for page in pages if page.count is not None],
            "status": status_snapshot(),
        },
    )


@require_GET
@browser_page
def character_overview(request: HttpRequest, name: str) -> HttpResponse:
    character = character_or_404(name)
    return render(
        request,
        "browser/character.html",
        {"character": character, "counts": layer_counts(character), "pages": layer_pages()},
    )
