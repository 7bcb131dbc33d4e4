"""A lookup's diagnostics row is written off the answer (issue 48)."""

from __future__ import annotations

import sqlite3
import time

import pytest
from django.db import connection

from knowledge import selectors, services
from knowledge.models import QueryRecord
from knowledge.query_log import knowledge_query_log_start
from nekomem.runtime import warmups
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


def test_a_server_s_writer_records_lookups_with_no_reader():
    services.knowledge_pack_install(raw=pack_bytes(fixture_pack()))
    knowledge_query_log_start()  # a server's warm-up
    assert services.knowledge_query(query="what is a rickroll", language="en")["result"] == "matched"
    deadline = time.monotonic() + 10
    while not QueryRecord.objects.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(QueryRecord.objects.values_list("result", "entry_title")) == [("matched", "Rickroll")]


def test_the_writer_starts_with_a_server_s_warm_ups():
    # The writer runs where the server's warm-ups run (nekomem/wsgi.py), never in a test's process.
    assert warmups._before_serving["knowledge-query-log"] is knowledge_query_log_start


def test_the_writer_gathers_the_rows_of_lookups_in_a_row_into_one_write(monkeypatch):
    # A write per lookup (a connection, the insert, the trim) cost the serving thread a third of its
    # CPU beside it; the writer now gathers for a while and writes what came meanwhile at once.
    monkeypatch.setattr("knowledge.query_log.GATHER_SECONDS", 3.0)
    services.knowledge_pack_install(raw=pack_bytes(fixture_pack()))
    knowledge_query_log_start()
    for _ in range(4):
        assert services.knowledge_query(query="what is a rickroll", language="en")["result"] == "matched"
    time.sleep(0.5)
    assert not QueryRecord.objects.exists()  # gathering: nothing written yet
    deadline = time.monotonic() + 15
    while not QueryRecord.objects.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    # The first row written came with the other three, in one transaction.
    assert QueryRecord.objects.count() == 4
