"""Active reflections are recalled by /query_memory (tier ``reflection``); terminal and suppressed ones
are not."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from recall import index_cache
from reflections.models import Reflection
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_recall_cache() -> Iterator[None]:
    # Rolled-back tests reuse a character's key and version; never serve another test's index.
    index_cache.clear()
    yield
    index_cache.clear()


def query(client, text: str) -> list[dict]:
    response = client.post(
        "/query_memory/小天", data=json.dumps({"query": text}), content_type="application/json"
    )
    return response.json()["results"]


def test_pending_and_confirmed_reflections_join_recall(client, character):
    pending = make_reflection(character=character, text="阿凛周末总喜欢去海边散步")
    confirmed = make_reflection(
        character=character, text="阿凛每到周末就去海边钓鱼", status=Reflection.Status.CONFIRMED
    )
    make_reflection(character=character, text="阿凛周末去海边冲浪", status=Reflection.Status.DENIED)
    make_reflection(
        character=character, text="阿凛周末在海边野餐", suppress=True, status=Reflection.Status.CONFIRMED
    )

    hits = query(client, "周末海边")
    assert {h["id"] for h in hits} == {pending.reflection_id, confirmed.reflection_id}
    assert {h["tier"] for h in hits} == {"reflection"}


def test_a_denial_drops_the_reflection_from_recall(client, character):
    reflection = make_reflection(character=character, text="阿凛喜欢在雨天读诗")
    assert [h["id"] for h in query(client, "雨天读诗")] == [reflection.reflection_id]
    client.post(
        f"/api/v1/characters/小天/reflections/{reflection.reflection_id}/deny/",
        data="{}",
        content_type="application/json",
    )
    assert query(client, "雨天读诗") == []
