from __future__ import annotations

import json

import pytest

from nekomem.runtime import startup, state
from recent.models import RecentMessage

pytestmark = pytest.mark.django_db

GUARDED = [
    ("post", "/cache/小天"),
    ("post", "/process/小天"),
    ("post", "/settle/小天"),
    ("get", "/new_dialog/小天"),
    ("get", "/get_recent_history/小天"),
    ("get", "/last_conversation_gap/小天"),
    ("get", "/api/v1/characters/"),
]


def call(client, method: str, path: str):
    body = json.dumps({"input_history": json.dumps([{"type": "human", "data": {"content": "hi"}}])})
    if method == "post":
        return client.post(path, data=body, content_type="application/json")
    return client.get(path)


def assert_blocked(response, reason: str):
    assert response.status_code == 409
    body = response.json()
    assert body["ok"] is False
    assert body["error_code"] == "storage_startup_blocked"
    assert body["blocking_reason"] == reason
    assert body["limited_mode"] is True
    assert body["error"]
    assert body["error"].encode() in response.content  # readable UTF-8, not \u escapes


@pytest.fixture
def initializing():
    state.set_initializing()
    yield
    assert startup.startup_run()


@pytest.mark.usefixtures("initializing")
@pytest.mark.parametrize(("method", "path"), GUARDED)
def test_every_route_is_409_until_startup_finished(client, method, path):
    assert_blocked(call(client, method, path), "runtime_initializing")
    assert RecentMessage.objects.count() == 0


@pytest.mark.usefixtures("initializing")
def test_health_answers_while_initializing(client):
    body = client.get("/health").json()
    assert body["service"] == "memory" and body["limited_mode"] is True


def test_block_then_continue(client, internal_client):
    blocked = internal_client.post(
        "/internal/storage/startup/block", data="{}", content_type="application/json"
    )
    assert blocked.status_code == 200
    for method, path in GUARDED:
        assert_blocked(call(client, method, path), "storage_startup_blocked_after_init")
    assert client.get("/health").status_code == 200
    released = internal_client.post("/internal/storage/startup/continue", content_type="application/json")
    assert released.status_code == 200 and released.json()["ok"] is True
    assert call(client, "post", "/cache/小天").json() == {"status": "cached", "count": 1}


def test_block_with_a_reason_reports_it(client, internal_client):
    internal_client.post(
        "/internal/storage/startup/block",
        data=json.dumps({"reason": "restore_in_progress"}),
        content_type="application/json",
    )
    assert_blocked(client.get("/new_dialog/小天"), "restore_in_progress")
    internal_client.post("/internal/storage/startup/continue", content_type="application/json")


def test_continue_stays_409_while_startup_cannot_finish(internal_client, django_db_blocker):
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader
    from django.db.migrations.recorder import MigrationRecorder

    state.set_initializing()
    # An unapplied migration makes storage unsafe: forget one that nothing depends on.
    app, name = sorted(MigrationLoader(connection).graph.leaf_nodes())[0]
    recorder = MigrationRecorder(connection)
    recorder.record_unapplied(app, name)
    try:
        response = internal_client.post("/internal/storage/startup/continue", content_type="application/json")
        assert response.status_code == 409
        assert "migrations not applied" in response.json()["blocking_reason"]
    finally:
        recorder.record_applied(app, name)
        assert startup.startup_run()
