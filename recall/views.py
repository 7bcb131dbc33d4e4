from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from nekomem.characters.locks import wait_for_settled
from nekomem.http import validated_name
from nekomem.locale import resolve_language
from recall.context import working_context_render


@require_GET
@validated_name
def new_dialog(request: HttpRequest, name: str) -> HttpResponse:
    character = wait_for_settled(name)
    if character is None:
        return HttpResponse("", content_type="text/plain; charset=utf-8")
    language = resolve_language(request.GET.get("language"), character.language)
    body = working_context_render(character=character, language=language)
    return HttpResponse(body, content_type="text/plain; charset=utf-8")
