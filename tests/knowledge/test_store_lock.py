"""A write waits at most 5 s for the store, then answers knowledge_busy."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from knowledge import services
from nekomem.characters.locks import store_lock

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_write_gives_up_after_five_seconds_while_another_holds_the_store(get, post):
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        try:
            with store_lock("knowledge", timeout=1) as got:
                assert got
                held.set()
                release.wait(30)
        finally:
            connections.close_all()

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(10)
        answer = post("settings", {"enabled": False})
        assert answer.status_code == 200
        assert answer.json()["reason"] == "knowledge_busy" and answer.json()["ok"] is False
        assert get("availability").json()["enabled"] is True
    finally:
        release.set()
        thread.join()
    assert services.knowledge_enabled_set(enabled=False) == {"enabled": False}
