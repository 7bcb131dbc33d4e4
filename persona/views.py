"""Memory-server routes of the persona layer (wire-compatible with the original, reference §1.3–1.4)."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from nekomem.characters.language import character_language
from nekomem.characters.selectors import character_get
from nekomem.http import json_ok, json_ok_string, validated_name
from persona.selectors import long_term_memory_markdown, persona_file_view, persona_state, settings_text
from persona.services import persona_ensure, reflections_reset_confirmed_at, suppressions_refresh

logger = logging.getLogger(__name__)


@require_GET
@validated_name
def get_settings(request: HttpRequest, name: str) -> HttpResponse:
    """The persona markdown without the headers; the legacy settings text when that is empty.

    Answered as a JSON string (application/json), as the original's route returns it (§1.7)."""
    character = character_get(name=name)
    if character is None:
        return json_ok_string("")
    suppressions_refresh(character_id=character.pk)
    persona_ensure(character_id=character.pk)
    language = character_language(
        character,
        request_language=request.GET.get("language"),
        render_language=request.GET.get("render_language"),
    )
    text = long_term_memory_markdown(character=character, language=language, now=timezone.now())
    if not text:
        state = persona_state(character_id=character.pk)
        text = settings_text(character=character, state=state, language=language)
    return json_ok_string(text)


@require_GET
@validated_name
def get_persona(request: HttpRequest, name: str) -> HttpResponse:
    character = character_get(name=name)
    if character is None:
        return json_ok({})
    persona_ensure(character_id=character.pk)
    return json_ok(persona_file_view(character_id=character.pk))


@csrf_exempt
@require_POST
def reset_confirmed_at(request: HttpRequest) -> HttpResponse:
    try:
        count = reflections_reset_confirmed_at()
    except Exception as exc:
        logger.exception("reset_confirmed_at failed")
        return json_ok({"ok": False, "error": type(exc).__name__, "count": 0})
    return json_ok({"ok": True, "count": count})
