"""Round trips of POST /cache, the chat hot path: a change that adds a statement fails here.

PostgreSQL writes a turn as one statement that takes both locks; SQLite runs the same UPDATE and
INSERTs one after another in its immediate transaction (recent/services/turn_write.py).
"""

from __future__ import annotations

import pytest

from tests.recent.scripting import post
from tests.support.dataset import english_messages
from tests.support.queries import statements_pinned

pytestmark = pytest.mark.django_db

# block check, SAVEPOINT, UPDATE character (row lock + activity), UPSERT the window state (positions),
# INSERT window, INSERT raw log, INSERT outbox op, RELEASE; PostgreSQL: block check, SAVEPOINT, the
# one statement, RELEASE.
CACHE_TURN = {"sqlite": 8, "postgresql": 4}


def test_a_cache_turn_for_a_known_character(client, django_assert_num_queries):
    post(client, "cache", "Mel", english_messages(2))  # creates the character and caches its id

    with statements_pinned(django_assert_num_queries, CACHE_TURN):
        response = post(client, "cache", "Mel", english_messages(2, start=2))

    assert response.json() == {"status": "cached", "count": 2}


def test_a_longer_history_costs_no_extra_statement(client, django_assert_num_queries):
    post(client, "cache", "Mel", english_messages(2))

    with statements_pinned(django_assert_num_queries, CACHE_TURN):
        response = post(client, "cache", "Mel", english_messages(12, start=2))

    assert response.json() == {"status": "cached", "count": 12}
