"""Every server answers from the same store: a change made through another connection (another server
of a PostgreSQL deployment) is seen by this process's next query, its index keyed on the store version."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connections

from knowledge import services
from tests.knowledge.factories import fixture_pack, pack_bytes

pytestmark = pytest.mark.django_db(transaction=True)


def elsewhere(change: Callable[[], object]) -> None:
    """Run ``change`` on a connection of its own, as another server would."""
    failures: list[BaseException] = []

    def run() -> None:
        try:
            change()
        except BaseException as exc:
            failures.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert not failures, failures


def titles(query: str) -> list[str]:
    return [hit["title"] for hit in services.knowledge_query(query=query, limit=5)["hits"]]


def test_a_disable_and_a_removal_made_elsewhere_reach_the_next_query():
    services.knowledge_pack_install(raw=pack_bytes(fixture_pack()))
    assert titles("rickroll") == ["Rickroll"]
    elsewhere(
        lambda: services.knowledge_entry_disabled_set(pack_id="memes.test", title="Rickroll", disabled=True)
    )
    assert "Rickroll" not in titles("rickroll")
    elsewhere(lambda: services.knowledge_pack_remove(pack_id="memes.test"))
    assert services.knowledge_query(query="芝士雪豹")["result"] == "miss"
