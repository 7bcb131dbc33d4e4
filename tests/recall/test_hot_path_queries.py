"""Round trips of GET /new_dialog and POST /query_memory: a change that adds a statement fails here."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from facts.services import FactDraft, facts_persist
from nekomem.characters.models import Character
from tests.facts.factories import make_fact
from tests.recall.support import require_muse
from tests.recent.scripting import post
from tests.support.dataset import english_messages
from tests.support.queries import statements_pinned

pytestmark = pytest.mark.django_db

# A warm /new_dialog (the long-term-memory block rendered for this memory version within the minute;
# after a bump that the block does not show, one read of the change log more):
# block check, the character's id, the character again once the settle lock is held (so a settle in
# flight is waited for), the persona state by which persona knows its cached block is current, the
# window with the raw log's last time (one statement), the theater capsules (a capped read of an
# index). On PostgreSQL the lookup by name takes the
# advisory lock and the read of the settled row releases it; SQLite's settle lock is a file lock, no
# statement. A cold one
# also creates the persona's sections and reads the entries, reflections, suppressions and token
# counts to render the block.
NEW_DIALOG = {"sqlite": 6, "postgresql": 6}
NEW_DIALOG_COLD = {"sqlite": 27, "postgresql": 27}
# Warm: block check and the character with its memory version, the extraction cursor and its raw-log
# row count (one statement: the cursor was a read of its own). The raw turns past the last one read
# only when the count moved (a turn since); the change log only when the version moved. The first
# query also reads every pool's rows (facts, raw turns, reflections) to build the index.
QUERY_WARM = {"sqlite": 2, "postgresql": 2}
QUERY_AFTER_A_TURN = {"sqlite": 3, "postgresql": 3}
# The build saves the index, then reads ``forgotten_version``: a deletion that committed during the save
# makes the fresh file go at once (it may hold the forgotten text).
QUERY_COLD = {"sqlite": 10, "postgresql": 10}


@pytest.fixture
def mel(client) -> Character:
    """A character with a window of ten turns and three facts."""
    post(client, "cache", "Mel", english_messages(10))
    character = Character.objects.get(name="Mel")
    for text in ("Emily went to Green Meadow Park", "Emily plays the piano", "Emily likes tea tasting"):
        make_fact(character=character, text=text)
    return character


def turn(said: str) -> list[dict]:
    return [{"type": "human", "data": {"content": said}}, {"type": "ai", "data": {"content": "Noted!"}}]


def ask(client, query: str):
    return client.post(
        "/query_memory/Mel", data=json.dumps({"query": query}), content_type="application/json"
    )


def test_new_dialog(client, mel, django_assert_num_queries):
    with statements_pinned(django_assert_num_queries, NEW_DIALOG_COLD):
        response = client.get("/new_dialog/Mel")
    assert response.content.decode().count(" | ") == 10  # the ten turns of the window
    with statements_pinned(django_assert_num_queries, NEW_DIALOG):
        again = client.get("/new_dialog/Mel")
    assert again.content == response.content


def test_query_memory_builds_the_index_once_then_reads_one_row(client, mel, django_assert_num_queries):
    require_muse()
    with statements_pinned(django_assert_num_queries, QUERY_COLD):
        first = ask(client, "which park did Emily visit")
    with statements_pinned(django_assert_num_queries, QUERY_WARM):
        again = ask(client, "what does Emily play")
    assert first.json()["results"] and again.json()["results"]


def test_a_query_after_a_turn_reads_its_raw_rows(client, mel, django_assert_num_queries):
    require_muse()
    ask(client, "which park did Emily visit")
    post(client, "cache", "Mel", turn("Emily named her new cat Mochi"))
    with statements_pinned(django_assert_num_queries, QUERY_AFTER_A_TURN):
        answer = ask(client, "what is the name of Emily's cat")
    assert any("Mochi" in row["text"] for row in answer.json()["results"])


def test_a_warm_query_reads_with_plain_statements(client, mel) -> None:
    """On PostgreSQL, ``QuerySet.iterator()`` outside a transaction is a server-side cursor WITH HOLD:
    one statement as counted above, but four round trips, and the hot path's readers paid that for
    the row or two a turn adds. Every read of a warm query, a new turn's and a new fact's included,
    is a plain statement."""
    require_muse()
    if connection.vendor != "postgresql":
        pytest.skip("server-side cursors are PostgreSQL's")
    ask(client, "which park did Emily visit")
    post(client, "cache", "Mel", english_messages(2))
    facts_persist(character_id=mel.pk, drafts=[FactDraft(text="Emily adopted a cat named Mochi")])
    cursors: list[str] = []

    def note_cursor(execute, sql, params, many, context):
        cursors.append(type(context["cursor"].cursor).__name__)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(note_cursor):
        answer = ask(client, "what is the name of Emily's cat")
    assert any("Mochi" in row["text"] for row in answer.json()["results"])
    assert cursors and "ServerCursor" not in cursors  # (ServerBindingCursor is a plain one)
