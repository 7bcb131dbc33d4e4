"""The character's language route (``/prompt-locale/{name}``) in the OpenAPI schema."""

from __future__ import annotations

from nekomem.wire_schema import ERRORS, Json, json_response, operation, register

COMPONENTS: dict[str, Json] = {
    "LanguageChoice": {
        "type": "object",
        "properties": {"language": {"type": "string", "description": "zh, zh-TW, en, ja, ko, ru, es, pt"}},
        "required": ["language"],
    },
}

PATHS: dict[str, Json] = {
    "/prompt-locale/{name}": {
        "get": operation(
            "wire_prompt_locale_get",
            "The character's durable language: {success, language|null, order, effective_language}",
            {"200": json_response("WireObject", "the stored choice"), **ERRORS},
        ),
        "put": operation(
            "wire_prompt_locale_put",
            "Choose the character's language: {success, language, order, previous_language, changed}",
            {
                "200": json_response("WireObject", "stored"),
                "400": json_response("WireObject", "unsupported language or invalid name"),
                "409": json_response(
                    "WireObject", "detail.error_code language_preference_superseded: a newer choice won"
                ),
            },
            body="LanguageChoice",
        ),
    },
}

register(__name__, paths=PATHS, components=COMPONENTS)
