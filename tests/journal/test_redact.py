"""``events_redact`` (issue 49, forgetting wins over history): a forgotten text leaves every version of
its row and every event that quotes it, seeds included; a short one is not blanked inside other texts."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.db.models import Q

from nekomem.journal.models import Event
from nekomem.journal.redaction import events_redact
from tests.characters.factories import CharacterFactory

pytestmark = pytest.mark.django_db

LONG = "主人最喜欢的城市是里斯本"  # 12 characters
SHORT = "爱猫"


def logged(character, event_type: str, payload: dict, *, seed: bool = False) -> Event:
    return Event.objects.create(
        character=character, type=event_type, ts="2026-01-01T00:00:00Z", payload=payload, seed=seed
    )


def payload_of(event: Event) -> dict:
    event.refresh_from_db()
    return event.payload


def test_the_rows_versions_and_every_quote_lose_the_text() -> None:
    character = CharacterFactory.create()
    own = logged(character, "fact.added", {"id": "fact_1", "text": f"{LONG}。", "tags": [LONG]})
    quoted = logged(character, "correction.queued", {"old_text": LONG, "new_text": "别的事"})
    seed = logged(character, "persona.fact_added", {"entry": {"id": "e1", "text": f"据说{LONG}"}}, seed=True)
    other = logged(character, "fact.added", {"id": "fact_2", "text": "主人住在波尔图"})
    with transaction.atomic():
        rewritten = events_redact(character_id=character.pk, texts=[LONG], match=Q(payload__id="fact_1"))
    assert rewritten == 3
    assert payload_of(own) == {"id": "fact_1", "text": "", "tags": [""]}
    assert payload_of(quoted) == {"old_text": "", "new_text": "别的事"}
    assert payload_of(seed) == {"entry": {"id": "e1", "text": ""}}
    assert payload_of(other) == {"id": "fact_2", "text": "主人住在波尔图"}


def test_a_short_text_is_blanked_in_its_own_versions_and_where_it_is_the_whole_string() -> None:
    character = CharacterFactory.create()
    own = logged(character, "persona.fact_added", {"entry": {"id": "e1", "text": f"主人{SHORT}"}})
    equal = logged(character, "correction.queued", {"old_text": SHORT, "new_text": "x"})
    inside = logged(character, "fact.added", {"id": "fact_9", "text": f"主人{SHORT}也爱狗"})
    with transaction.atomic():
        events_redact(
            character_id=character.pk, texts=[f"主人{SHORT}", SHORT], match=Q(payload__entry__id="e1")
        )
    assert payload_of(own)["entry"]["text"] == ""
    assert payload_of(equal)["old_text"] == ""
    assert payload_of(inside)["text"] == f"主人{SHORT}也爱狗"


def test_another_characters_log_is_not_touched() -> None:
    mine, theirs = CharacterFactory.create_batch(2)
    kept = logged(theirs, "correction.queued", {"old_text": LONG, "new_text": ""})
    with transaction.atomic():
        assert events_redact(character_id=mine.pk, texts=[LONG]) == 0
    assert payload_of(kept)["old_text"] == LONG
