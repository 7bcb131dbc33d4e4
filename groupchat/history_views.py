"""``scoped_history`` (reference §1.6): a thin adapter over ``scoped_history_write``."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from groupchat.requests import detail, history_request_parse, ok, request_body, scoped_post_route
from groupchat.services import HistoryExtractionFailed, KeyReused, scoped_history_write
from nekomem.characters.services import character_get_or_create


@scoped_post_route
def scoped_history(request: HttpRequest, name: str) -> HttpResponse:
    parsed = history_request_parse(request_body(request))
    character = character_get_or_create(name=name)
    try:
        return ok(scoped_history_write(character=character, request=parsed))
    except KeyReused as exc:
        return detail(str(exc))
    except HistoryExtractionFailed:
        return detail("scoped fact extraction failed; retry later", status=502)
