"""Recording a finished turn for the conversation routes: the write, then compression and review."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from django.db import transaction

from nekomem.characters.language import language_arrival_stamp
from nekomem.characters.locks import settle_lock, settled_transaction
from nekomem.characters.services import character_id_for
from recent.compression import compress_inline, compress_request
from recent.review import review_maybe_spawn
from recent.services.turn_write import STATEMENT_MAX_MESSAGES, turn_write_orm, turn_write_statement

CompressMode = Literal["never", "background", "inline"]


@dataclass(frozen=True)
class TurnRecorded:
    character_id: int
    # ``inline`` only: why the window that needed compressing was not compressed (None: it was, or
    # needed nothing); a background job then retries it.
    not_compressed: str | None = None


def turn_record(
    *,
    name: str,
    messages: list[dict[str, Any]],
    language: str | None,
    append_recent: bool = True,
    compress: CompressMode = "never",
    language_order: int | None = None,
) -> TurnRecorded:
    """Persist one finished turn atomically: recent window, raw log and post-turn op, or nothing.

    ``/cache``, ``/process`` and ``/renew`` append to the window; ``/settle`` only journals the
    messages it was given (they are already in the window from ``/cache``).

    ``compress``: ``/cache`` never compresses; ``/process`` and ``/settle`` ask for a background
    compression (the chat must not wait for an LLM); ``/renew`` summarises while still holding the
    settle lock, so the ``/new_dialog`` that follows it waits for the memo. Every compressing route
    then considers a history review, which always runs in the background.

    ``language_order``: the request's arrival stamp (``language_arrival_stamp``, taken by the view),
    so an explicit ``language`` is remembered only over an older choice.

    Returns the character's id, and for ``inline`` why the window was not compressed, if it was not.
    """
    not_compressed: str | None = None
    write: dict[str, Any] = {
        "messages": messages,
        "language": language,
        "append_recent": append_recent,
        "language_order": language_order or language_arrival_stamp(),
    }
    if compress == "inline":
        character_id = character_id_for(name=name)
        with settle_lock(character_id):
            with transaction.atomic():
                turn_write_orm(character_id=character_id, **write)
            not_compressed = compress_inline(character_id=character_id)
    elif len(messages) > STATEMENT_MAX_MESSAGES:
        character_id = character_id_for(name=name)
        with settled_transaction(character_id):
            turn_write_orm(character_id=character_id, **write)
    else:
        character_id = turn_write_statement(name=name, **write)
    # Outside the settle lock: a job's task may run right away (django-q sync mode) and its splice
    # takes the lock itself.
    if compress == "background" or not_compressed is not None:
        compress_request(character_id=character_id)
    if compress != "never":
        review_maybe_spawn(character_id=character_id)
    return TurnRecorded(character_id=character_id, not_compressed=not_compressed)
