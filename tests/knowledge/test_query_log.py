"""A lookup's diagnostics row is written off the answer (issue 48)."""

from __future__ import annotations

import sqlite3

import pytest
from django.db import connection

from knowledge import selectors, services
from knowledge.models import QueryRecord
from tests.knowledge.factories import fixture_pack, pack_bytes

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_lookup_answers_while_another_connection_holds_the_write_lock():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's one write lock")
    services.knowledge_pack_install(raw=pack_bytes(fixture_pack()))
    holder = sqlite3.connect(connection.settings_dict["NAME"], timeout=0, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        assert (
            services.knowledge_query(query="what is a rickroll", language="en", budget_ms=2000)["result"]
            == "matched"
        )
        # Answered with its record still queued: the lock is held, nothing could write it.
        table = QueryRecord._meta.db_table
        assert holder.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
        holder.execute("ROLLBACK")
    finally:
        holder.close()
    queries = selectors.knowledge_diagnostics()["queries"]
    assert [(row["result"], row["entry_title"]) for row in queries] == [("matched", "Rickroll")]
