"""Time said inside a turn, without an LLM: a cached turn that says when something happened carries
that window (read by the time parser against the turn's own timestamp), so a time-windowed
``/query_memory`` finds it before any fact is extracted; once extraction covers it, facts take over."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings
from django.utils import timezone

from facts.models import ExtractionCursor
from nekomem.characters.models import Character
from nekomem.runtime import startup, state
from recall import turn_vectors
from recall.models import RawTurnVector
from recall.turn_vectors import turn_vectors_idle

NAME = "小雨"
SAID = {
    "zh": ("上周末去了泰山", "上周末"),
    "zh-TW": ("上週末去了泰山", "上週末"),
    "en": ("I started the cello last week", "last week"),
    "ja": ("先週チェロを始めた", "先週"),
    "ko": ("지난주에 첼로를 시작했어", "지난주"),
    "ru": ("На прошлой неделе я начал играть на виолончели", "на прошлой неделе"),
    "es": ("La semana pasada empecé el violonchelo", "la semana pasada"),
    "pt": ("Na semana passada comecei o violoncelo", "semana passada"),
}
REPLY = "🙂 ok"


def in_window(client, when: str) -> dict[str, float]:
    body = {"time": when, "explain": True}
    answer = client.post(f"/query_memory/{NAME}", data=json.dumps(body), content_type="application/json")
    assert answer.status_code == 200 and answer.json()["mode"] == "time"
    return {row["text"]: row["explain"]["paths"]["time"]["score"] for row in answer.json()["results"]}


# The thread that reads the turn has a connection of its own: committed rows only. Vectors are not
# needed here (the window is read with or without a model).
@pytest.mark.django_db(transaction=True)
@override_settings(RECALL_EMBED_TURNS_ON_ARRIVAL=True, EMBEDDINGS_ENABLED=False)
@pytest.mark.parametrize("locale", list(SAID))
def test_a_turn_that_says_when_is_found_in_that_window(client, post_history, locale: str) -> None:
    said, when = SAID[locale]
    assert post_history("cache", NAME, ("human", said), ("ai", REPLY)).status_code == 200
    assert turn_vectors_idle(timeout=30)
    found = in_window(client, when)
    assert found.get(said) == 0.0, found  # inside the window the turn names
    assert found.get(REPLY, 0.0) > 0.0, found  # said today, it names no time: outside last week's
    # Stored with the raw row: one of the two turns names a time, and it is in the past.
    (stored,) = RawTurnVector.objects.filter(character__name=NAME, event_start_at__isnull=False)
    assert stored.event_start_at is not None and stored.event_start_at < timezone.now()

    # Extraction covers the turns: they leave the raw-turn pool (the facts it wrote answer instead).
    character = Character.objects.get(name=NAME)
    ExtractionCursor.objects.update_or_create(
        character=character, defaults={"last_a_message_at": timezone.now()}
    )
    assert said not in in_window(client, when)


@pytest.mark.django_db
@override_settings(EMBEDDINGS_ENABLED=False)
def test_the_turn_thread_writes_nothing_while_storage_is_blocked(post_history) -> None:
    said, _ = SAID["en"]
    post_history("cache", NAME, ("human", said))  # the hook is off in tests: the thread's work is run here
    character = Character.objects.get(name=NAME)
    state.storage_block(reason="restore")
    try:
        turn_vectors._embed(character.pk)
        assert not RawTurnVector.objects.filter(character=character).exists()
    finally:
        startup.storage_release()
    turn_vectors._embed(character.pk)  # lifted: the turn is read (and its window stored)
    assert RawTurnVector.objects.get(character=character).event_start_at is not None
