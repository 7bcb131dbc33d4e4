"""The front door (``/``), a character's overview page, and its rename and delete."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from nekomem.browser.access import browser_page
from nekomem.browser.layer_views import character_or_404
from nekomem.browser.registry import layer_pages, overview_extras
from nekomem.characters.language import character_language, language_arrival_stamp, stored_language
from nekomem.characters.models import Character
from nekomem.characters.names import MAX_NAME_LENGTH, InvalidCharacterName
from nekomem.characters.selectors import character_footprint, character_get, character_list
from nekomem.characters.services import (
    CharacterNameTaken,
    CharacterNotFound,
    LanguageSuperseded,
    UnsupportedLanguage,
    character_delete,
    character_language_set,
    character_rename,
)
from nekomem.language.codes import SUPPORTED_LANGUAGES
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
        {
            "character": character,
            "counts": layer_counts(character),
            "pages": layer_pages(),
            "active_tab": "overview",
            "max_name_length": MAX_NAME_LENGTH,
            "stored_language": stored_language(character),
            "effective_language": character_language(character),
            "languages": SUPPORTED_LANGUAGES,
            **overview_extras(character.name),
        },
    )


@require_POST
@browser_page
def character_language_view(request: HttpRequest, name: str) -> HttpResponse:
    """The overview's language form: a choice in arrival order, like ``PUT /prompt-locale``."""
    arrived = language_arrival_stamp()
    character = character_or_404(name)
    try:
        choice = character_language_set(
            name=character.name, language=request.POST.get("language", ""), order=arrived
        )
    except UnsupportedLanguage as exc:
        messages.error(request, f"不支持的语言，未更改 Unsupported language, nothing changed: {exc}")
    except LanguageSuperseded:
        messages.warning(request, "已有更新的语言偏好生效 A newer language choice is already in effect")
    else:
        messages.success(request, f"语言已设为 Language set to {choice.language}")
    return redirect("browser-character", name=character.name)


# What the delete page calls each app holding a character's rows (the apps' own names are English only).
LAYER_TITLES = {
    "recent": "近期记忆 Recent memory",
    "facts": "事实 Facts",
    "reflections": "反思 Reflections",
    "persona": "人设 Persona",
    "journal": "事件、队列与任务 Events, outbox and jobs",
}


@require_POST
@browser_page
def character_rename_view(request: HttpRequest, name: str) -> HttpResponse:
    new_name = request.POST.get("new_name", "")
    try:
        character = character_rename(name=name, new_name=new_name)
    except CharacterNotFound as exc:
        raise Http404(str(exc)) from exc
    except InvalidCharacterName as exc:
        messages.error(request, f"新名字无效，未改名 Invalid new name, nothing changed: {exc}")
        return redirect("browser-character", name=name)
    except CharacterNameTaken:
        messages.error(
            request,
            f"已有名为 {new_name} 的角色，未改名 A character named {new_name} exists, nothing changed",
        )
        return redirect("browser-character", name=name)
    if character.name != name:
        messages.success(request, f"已改名为 Renamed to {character.name}")
    return redirect("browser-character", name=character.name)


@require_http_methods(["GET", "POST"])
@browser_page
def character_delete_view(request: HttpRequest, name: str) -> HttpResponse:
    """GET: what would be lost, per layer, with the export offered first. POST: delete, once the name
    is typed again."""
    character = character_get(name=name)
    if character is None:
        raise Http404(f"no character named {name!r}")
    if request.method == "POST":
        if request.POST.get("confirm_name") != name:
            messages.error(request, "输入的名字不一致，未删除 The name typed does not match, nothing deleted")
            return redirect("browser-character-delete", name=name)
        try:
            footprint = character_delete(name=name)
        except CharacterNotFound as exc:
            raise Http404(str(exc)) from exc
        messages.success(
            request, f"已删除 {name} 及其 {footprint.total} 条记录 Deleted {name} and {footprint.total} rows"
        )
        return redirect("front_door")
    footprint = character_footprint(character_id=character.pk)
    layers = [(LAYER_TITLES.get(layer.layer, layer.title), layer.counts) for layer in footprint.layers]
    return render(
        request,
        "browser/character_delete.html",
        {"character": character, "footprint": footprint, "layers": layers},
    )
