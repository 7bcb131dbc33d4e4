from __future__ import annotations

import json

import pytest

from recent.models import RawMessage

pytestmark = pytest.mark.django_db

REMOTE = {"REMOTE_ADDR": "192.0.2.10"}


def cache(client, **extra):
    body = json.dumps({"input_history": json.dumps([{"type": "human", "data": {"content": "hi"}}])})
    return client.post("/cache/小天", data=body, content_type="application/json", **extra)


def test_loopback_clients_need_no_token(client):
    assert cache(client, REMOTE_ADDR="127.0.0.1").status_code == 200
    assert cache(client, REMOTE_ADDR="::1").status_code == 200


def test_remote_client_is_refused_when_no_token_is_configured(client, settings):
    settings.NEKOMEM_API_TOKEN = ""
    response = cache(client, **REMOTE)
    assert response.status_code == 403 and response.json()["error_code"] == "forbidden"
    assert RawMessage.objects.count() == 0


def test_remote_client_needs_the_bearer_token(client, settings):
    settings.NEKOMEM_API_TOKEN = "s3cret-token"
    assert cache(client, **REMOTE).status_code == 401
    assert cache(client, HTTP_AUTHORIZATION="Bearer wrong", **REMOTE).status_code == 401
    ok = cache(client, HTTP_AUTHORIZATION="Bearer s3cret-token", **REMOTE)
    assert ok.status_code == 200 and ok.json()["count"] == 1


def test_oversized_body_is_413_and_writes_nothing(client, settings):
    settings.NEKOMEM_MAX_BODY_BYTES = 1000
    big = json.dumps({"input_history": json.dumps([{"type": "human", "data": {"content": "猫" * 2000}}])})
    response = client.post("/cache/小天", data=big, content_type="application/json")
    assert response.status_code == 413
    assert response.json()["error_code"] == "body_too_large"
    assert RawMessage.objects.count() == 0


def test_health_is_signed(client, settings):
    import hashlib
    import hmac

    body = client.get("/health").json()
    expected = hmac.new(
        settings.SECRET_KEY.encode(), f"memory:{body['instance_id']}".encode(), hashlib.sha256
    )
    assert body["signature"] == expected.hexdigest()


def test_shutdown_is_refused_unless_enabled(internal_client):
    response = internal_client.post("/shutdown", content_type="application/json")
    assert response.status_code == 403 and response.json()["status"] == "shutdown_disabled"
