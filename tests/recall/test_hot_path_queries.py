"""Round trips of GET /new_dialog and POST /query_memory: a change that adds a statement fails here."""

from __future__ import annotations

import json

import pytest

from nekomem.characters.models import Character
from tests.facts.factories import make_fact
from tests.recall.support import require_muse
from tests.recent.scripting import post
from tests.support.dataset import english_messages
from tests.support.queries import statements_pinned

pytestmark = pytest.mark.django_db

# block check, the character, the character again inside the settle lock (so a settle in flight is
# waited for), the window, the raw log's last time. PostgreSQL adds the advisory lock and unlock;
# SQLite's settle lock is a file lock, no statement.
NEW_DIALOG = {"sqlite": 5, "postgresql": 7}
# block check, the character with its memory version; the first query after a change also reads
# the memory rows to build the index.
QUERY_WARM = {"sqlite": 2, "postgresql": 2}
QUERY_COLD = {"sqlite": 3, "postgresql": 3}


@pytest.fixture
def mel(client) -> Character:
    """A character with a window of ten turns and three facts."""
    post(client, "cache", "Mel", english_messages(10))
    character = Character.objects.get(name="Mel")
    for text in ("Emily went to Green Meadow Park", "Emily plays the piano", "Emily likes tea tasting"):
        make_fact(character=character, text=text)
    return character


def ask(client, query: str):
    return client.post(
        "/query_memory/Mel", data=json.dumps({"query": query}), content_type="application/json"
    )


def test_new_dialog(client, mel, django_assert_num_queries):
    with statements_pinned(django_assert_num_queries, NEW_DIALOG):
        response = client.get("/new_dialog/Mel")
    assert response.content.decode().count(" | ") == 10  # the ten turns of the window


def test_query_memory_builds_the_index_once_then_reads_one_row(client, mel, django_assert_num_queries):
    require_muse()
    with statements_pinned(django_assert_num_queries, QUERY_COLD):
        first = ask(client, "which park did Emily visit")
    with statements_pinned(django_assert_num_queries, QUERY_WARM):
        again = ask(client, "what does Emily play")
    assert first.json()["results"] and again.json()["results"]
