"""The group-chat ("scoped") routes but ``scoped_history`` (reference §1.6): facts, context, mentions,
forgetting, the subject list and the forget tombstones. Errors are the original's plain ``{"detail": …}``."""

from __future__ import annotations

import logging
from typing import Any

from django.http import HttpRequest, HttpResponse

from groupchat.requests import (
    Unprocessable,
    detail,
    display_name_field,
    epoch_keys_field,
    facts_field,
    is_count,
    language_field,
    ok,
    platform_field,
    request_body,
    scoped_get_route,
    scoped_post_route,
    subject_field,
    subjects_field,
)
from groupchat.selectors import forget_epochs_read, scoped_subjects_list
from groupchat.services import (
    ForgetEpochScope,
    scoped_context_render,
    scoped_facts_write,
    scoped_forget,
    scoped_mentions_record,
)
from nekomem.characters.selectors import character_get
from nekomem.characters.services import character_get_or_create

logger = logging.getLogger(__name__)


@scoped_post_route
def scoped_facts(request: HttpRequest, name: str) -> HttpResponse:
    body = request_body(request)
    subject = subject_field(body.get("subject"))
    facts = facts_field(body.get("facts"))
    display_name = display_name_field(body.get("display_name"))
    language = language_field(body.get("language"))
    character = character_get_or_create(name=name)
    stored = scoped_facts_write(
        character_id=character.pk, subject=subject, facts=facts, display_name=display_name, language=language
    )
    logger.info("scoped_facts %s: %d created of %d", name, stored.created, len(facts))
    return ok(
        {
            "status": "stored",
            "subject": subject.as_dict(),
            "created": stored.created,
            "fact_ids": stored.fact_ids,
        }
    )


@scoped_post_route
def scoped_context(request: HttpRequest, name: str) -> HttpResponse:
    body = request_body(request)
    subjects = subjects_field(body.get("subjects"))
    language = language_field(body.get("language"))
    text = scoped_context_render(character=character_get(name=name), subjects=subjects, language=language)
    return HttpResponse(text, content_type="text/plain; charset=utf-8")


@scoped_post_route
def scoped_mentions(request: HttpRequest, name: str) -> HttpResponse:
    body = request_body(request)
    subjects = subjects_field(body.get("subjects"))
    text = body.get("response_text")
    if not isinstance(text, str):
        raise Unprocessable("response_text must be a string")
    character = character_get(name=name)
    if character is None or not text.strip():
        return ok({"status": "skipped"})
    recorded = scoped_mentions_record(character_id=character.pk, response_text=text, subjects=subjects)
    return ok({"status": "recorded" if recorded else "skipped"})


@scoped_post_route
def scoped_forget_view(request: HttpRequest, name: str) -> HttpResponse:
    body = request_body(request)
    subject = subject_field(body.get("subject"))
    epoch = body.get("forget_epoch")
    if epoch is not None and not is_count(epoch):
        raise Unprocessable("forget_epoch must be an integer >= 0")
    character = character_get_or_create(name=name)
    try:
        forgotten = scoped_forget(character_id=character.pk, subject=subject, forget_epoch=epoch)
    except ForgetEpochScope as exc:
        return detail(str(exc))
    except Exception:
        logger.exception("scoped_forget %s failed", name)
        return detail("scoped forget failed; retry is safe", status=500)
    answer: dict[str, Any] = {
        "status": "forgotten",
        "subject": subject.as_dict(),
        "forgotten_subjects": forgotten.forgotten_subjects,
    }
    if forgotten.duplicate:
        answer["duplicate"] = True
    else:
        answer.update(forgotten.counts)
    logger.info("scoped_forget %s: %s", name, forgotten.counts)
    return ok(answer)


@scoped_get_route
def scoped_subjects(request: HttpRequest, name: str) -> HttpResponse:
    platform = platform_field(request.GET.get("platform"))
    character = character_get(name=name)
    if character is None:
        return ok({"subjects": []})
    return ok({"subjects": scoped_subjects_list(character_id=character.pk, platform=platform)})


@scoped_get_route
def forget_epochs(request: HttpRequest, name: str) -> HttpResponse:
    keys = epoch_keys_field(request.GET.getlist("subject"))
    character = character_get(name=name)
    try:
        epochs = forget_epochs_read(character_id=character.pk if character else None, subject_keys=keys)
    except Exception:
        # Never answer "no fence" when the tombstones cannot be read.
        logger.exception("forget_epochs %s: tombstones unreadable", name)
        return detail("forget epochs unavailable; retry later", status=503)
    return ok({"epochs": epochs})
