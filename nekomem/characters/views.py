"""``/prompt-locale/{name}``: the character settings page's language (reference §1.7)."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from nekomem.characters.language import character_language, language_arrival_stamp, stored_language
from nekomem.characters.selectors import character_get
from nekomem.characters.services import (
    LanguageSuperseded,
    UnsupportedLanguage,
    character_language_set,
)
from nekomem.http import json_ok, validated_name


@csrf_exempt
@require_http_methods(["GET", "PUT"])
@validated_name
def prompt_locale(request: HttpRequest, name: str) -> HttpResponse:
    if request.method == "GET":
        character = character_get(name=name)
        return json_ok(
            {
                "success": True,
                "language": stored_language(character) if character else None,
                "order": character.language_order if character else 0,
                "effective_language": character_language(character),
            }
        )
    arrived = language_arrival_stamp()  # before the body is read or any lock waited for
    try:
        body = json.loads(request.body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return json_ok({"success": False, "error": "body is not valid JSON"}, status=400)
    language = body.get("language") if isinstance(body, dict) else None
    try:
        choice = character_language_set(name=name, language=language, order=arrived)
    except UnsupportedLanguage as exc:
        return json_ok(
            {"success": False, "error": str(exc), "error_code": "unsupported_language"}, status=400
        )
    except LanguageSuperseded:
        detail = {
            "error_code": "language_preference_superseded",
            "message": "a newer language preference is already stored",
        }
        return json_ok({"success": False, "detail": detail}, status=409)
    return json_ok(
        {
            "success": True,
            "language": choice.language,
            "order": choice.order,
            "previous_language": choice.previous_language,
            "changed": choice.changed,
        }
    )
