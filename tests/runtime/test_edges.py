"""Edges of the wire routes (issue 14): body limits, chunked bodies, odd names, missing bodies,
the reload and deprecated routes, and JSON error bodies everywhere the chat server calls."""

from __future__ import annotations

import io
import json

import pytest
from django.db import connection
from django.db.models import F

from nekomem.runtime.models import FeatureSwitch, StorageState
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_enabled
from recent.models import RawMessage, RecentMessage
from tests.conftest import history

pytestmark = pytest.mark.django_db

MIB = 1024 * 1024


def turn_body(text: str) -> bytes:
    return json.dumps({"input_history": history(("human", text))}, ensure_ascii=False).encode()


def chunked_post(client, path: str, body: bytes):
    """A body as the HTTP server hands on a chunked request: a stream and no Content-Length."""
    return client.generic(
        "POST",
        path,
        data=body,
        content_type="application/json",
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": io.BytesIO(body)},
    )


# --- one body limit --------------------------------------------------------------------------------------


def test_a_body_above_djangos_own_limit_but_under_ours_is_stored(client, settings, caplog):
    text = "长" * (MIB + 10)  # three bytes a character in UTF-8: a 3 MiB body
    body = turn_body(text)
    assert 3 * MIB < len(body) < settings.NEKOMEM_MAX_BODY_BYTES
    response = client.post("/cache/小天", data=body, content_type="application/json")
    assert response.status_code == 200
    assert response.json() == {"status": "cached", "count": 1}
    assert RawMessage.objects.filter(character__name="小天").count() == 1
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_body_over_the_limit_is_413_and_stores_nothing(client, settings, chunked):
    settings.NEKOMEM_MAX_BODY_BYTES = 64 * 1024
    body = turn_body("x" * (70 * 1024))
    if chunked:
        response = chunked_post(client, "/cache/小天", body)
    else:
        response = client.post("/cache/小天", data=body, content_type="application/json")
    assert response.status_code == 413
    assert response.json()["error_code"] == "body_too_large"
    assert RawMessage.objects.count() == 0


# --- chunked bodies --------------------------------------------------------------------------------------


def test_a_chunked_body_is_read_not_taken_for_empty(client):
    response = chunked_post(client, "/cache/小天", turn_body("用分块发来的一句"))
    assert response.status_code == 200
    assert response.json() == {"status": "cached", "count": 1}
    assert RecentMessage.objects.get().data["content"] == "用分块发来的一句"


# --- names -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "route"),
    [
        ("post", "cache"),
        ("post", "process"),
        ("post", "settle"),
        ("post", "query_memory"),
        ("get", "new_dialog"),
        ("get", "get_recent_history"),
        ("get", "last_conversation_gap"),
        ("post", "cancel_correction"),
    ],
)
@pytest.mark.parametrize("name", ["..%2Fetc", "a%2Fb", "..%2F..%2Fpasswd"])
def test_a_name_with_an_encoded_slash_gets_the_json_400_of_every_bad_name(client, method, route, name):
    if method == "post":
        response = client.post(f"/{route}/{name}", data=turn_body("hi"), content_type="application/json")
    else:
        response = client.get(f"/{route}/{name}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["error_code"] == "invalid_character_name"
    assert RawMessage.objects.count() == 0


def test_an_unknown_route_is_a_json_404_but_browser_pages_keep_html(client):
    response = client.get("/no_such_route/小天")
    assert response.status_code == 404
    assert response.json()["error_code"] == "not_found"
    assert response.json()["status"] == "error"
    page = client.get("/admin/no/such/page/")
    assert page.status_code in (302, 404)
    assert not page["Content-Type"].startswith("application/json")


def test_a_wrong_method_is_405_with_a_json_body_and_the_allow_header(client):
    response = client.get("/cache/小天")
    assert response.status_code == 405
    assert response.json()["error_code"] == "method_not_allowed"
    assert response["Allow"] == "POST"


# --- /settle without a body -----------------------------------------------------------------------------


@pytest.mark.parametrize("body", [None, b"{}", json.dumps({"language": "en"}).encode()])
def test_settle_without_messages_settles(client, body):
    client.post("/cache/小天", data=turn_body("先缓存的一句"), content_type="application/json")
    if body is None:
        response = client.generic("POST", "/settle/小天")  # no body, no Content-Type
    else:
        response = client.post("/settle/小天", data=body, content_type="application/json")
    assert response.status_code == 200
    assert response.json() == {"status": "settled"}
    assert RawMessage.objects.count() == 1  # nothing journalled twice
    assert RecentMessage.objects.count() == 1


# --- /last_conversation_gap's failure path ---------------------------------------------------------------


def test_last_conversation_gap_answers_500_with_the_original_body_when_the_store_fails(client):
    client.post("/cache/小天", data=turn_body("hi"), content_type="application/json")
    table = connection.ops.quote_name(RawMessage._meta.db_table)
    with connection.cursor() as cursor:  # the raw log is gone, as after a broken restore
        cursor.execute(f"ALTER TABLE {table} RENAME TO recent_rawmessage_moved")
    response = client.get("/last_conversation_gap/小天")
    assert response.status_code == 500
    assert response.json() == {"gap_seconds": -1, "error": "server_error"}


# --- /search_for_memory, deprecated ---------------------------------------------------------------------


@pytest.mark.parametrize(("language", "marker"), [("zh", "已下线"), ("en", "offline")])
def test_search_for_memory_answers_the_deprecated_placeholder(client, language, marker):
    client.post("/cache/小天", data=turn_body("我喜欢草莓"), content_type="application/json")
    response = client.get(f"/search_for_memory/小天/草莓蛋糕?language={language}")
    assert response.status_code == 200
    text = response.content.decode()
    lines = text.splitlines()
    assert "小天" in lines[0]
    assert lines[1] == "草莓蛋糕"
    assert marker in text
    assert "我喜欢草莓" not in text  # a placeholder: it recalls nothing


def test_search_for_memory_checks_the_name(client):
    response = client.get("/search_for_memory/..%2Fetc/q")
    assert response.status_code == 400
    assert response.json()["error_code"] == "invalid_character_name"


# --- /reload ---------------------------------------------------------------------------------------------


def test_reload_needs_the_secret(client):
    response = client.post("/reload", data=b"{}", content_type="application/json")
    assert response.status_code in (401, 403)
    assert StorageState.objects.filter(generation__gt=0).count() == 0


def test_reload_drops_this_process_caches(client, internal_client):
    assert switch_enabled(POWERFUL_MEMORY) is True  # now cached in this process
    # Changed underneath, as another process or an operator's restore would.
    FeatureSwitch.objects.update_or_create(name=POWERFUL_MEMORY, defaults={"enabled": False})
    assert switch_enabled(POWERFUL_MEMORY) is True
    response = internal_client.post(
        "/reload", data=json.dumps({"resume_derived_task_names": []}), content_type="application/json"
    )
    assert response.status_code == 200
    assert response.json()["ok"] is True and response.json()["status"] == "reloaded"
    assert switch_enabled(POWERFUL_MEMORY) is False


def test_a_reload_asked_elsewhere_is_followed_before_the_next_request(client):
    client.get("/last_conversation_gap/小天")  # this process has seen the current generation
    assert client.get("/api/v1/powerful_memory_config").json() == {"enabled": True}
    FeatureSwitch.objects.update_or_create(name=POWERFUL_MEMORY, defaults={"enabled": False})
    StorageState.objects.update_or_create(pk=1, defaults={})
    StorageState.objects.filter(pk=1).update(generation=F("generation") + 1)  # another worker's /reload
    assert client.get("/api/v1/powerful_memory_config").json() == {"enabled": False}
