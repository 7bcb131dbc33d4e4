"""The launcher's credential on the control routes in install mode; standalone keeps its rules."""

from __future__ import annotations

import pytest

from nekomem.runtime.startup import storage_release
from nekomem.runtime.state import current_block
from tests.install.conftest import CSRF_TOKEN, INSTANCE_ID

pytestmark = pytest.mark.django_db

# What the original launcher's native HTTP client sends: loopback peer and Host, nothing a browser adds.
NATIVE = {"REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": "127.0.0.1:48912"}
CONTROL_ROUTES = ["/internal/storage/startup/block", "/internal/memory/reset_confirmed_at", "/reload"]


@pytest.fixture(autouse=True)
def _storage_released():
    yield
    storage_release()


def post(client, path, **extra):
    return client.post(path, content_type="application/json", **extra)


@pytest.mark.usefixtures("neko_root")
@pytest.mark.parametrize("path", CONTROL_ROUTES)
def test_the_launch_token_opens_the_control_routes(client, path):
    response = post(client, path, HTTP_X_CSRF_TOKEN=CSRF_TOKEN, HTTP_HOST="127.0.0.1:48912")
    assert response.status_code == 200, response.content


@pytest.mark.usefixtures("neko_root")
def test_the_instance_id_is_the_token_when_the_launcher_sets_none(client, settings):
    settings.NEKO_AUTOSTART_CSRF_TOKEN = ""
    assert post(client, "/internal/storage/startup/block", HTTP_X_CSRF_TOKEN=CSRF_TOKEN).status_code == 403
    assert post(client, "/internal/storage/startup/block", HTTP_X_CSRF_TOKEN=INSTANCE_ID).status_code == 200
    assert current_block() is not None


@pytest.mark.usefixtures("neko_root")
@pytest.mark.parametrize("path", CONTROL_ROUTES)
def test_a_wrong_token_is_403_and_changes_nothing(client, path):
    response = post(client, path, HTTP_X_CSRF_TOKEN="guess", **NATIVE)
    assert response.status_code == 403
    assert response.json()["error_code"] == "csrf_token_invalid"
    assert current_block() is None


@pytest.mark.usefixtures("neko_root")
def test_a_native_loopback_caller_needs_no_credential_as_older_builds_call(client):
    assert post(client, "/internal/storage/startup/block", **NATIVE).status_code == 200
    assert current_block() is not None
    assert post(client, "/internal/storage/startup/continue", **NATIVE).status_code == 200
    assert current_block() is None
    assert post(client, "/internal/memory/reset_confirmed_at", **NATIVE).status_code == 200


@pytest.mark.usefixtures("neko_root")
@pytest.mark.parametrize(
    "browser",
    [
        {"HTTP_ORIGIN": "http://127.0.0.1:48912"},  # the server's own origin: still a browser
        {"HTTP_SEC_FETCH_SITE": "same-origin", "HTTP_SEC_FETCH_MODE": "cors"},
        {"HTTP_COOKIE": "sessionid=abc"},
        {"HTTP_X_FORWARDED_FOR": "203.0.113.9"},
        {"HTTP_HOST": "memory.lan:48912"},
    ],
)
def test_a_browser_or_proxied_request_without_the_token_is_refused(client, settings, browser):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "memory.lan"]
    response = post(client, "/internal/storage/startup/block", **{**NATIVE, **browser})
    assert response.status_code == 403
    assert response.json()["error_code"] == "csrf_token_required"
    assert current_block() is None


@pytest.mark.usefixtures("neko_root")
def test_a_foreign_origin_is_refused_even_with_the_token(client):
    response = post(
        client,
        "/internal/storage/startup/block",
        HTTP_X_CSRF_TOKEN=CSRF_TOKEN,
        HTTP_ORIGIN="http://evil.example",
        **NATIVE,
    )
    assert response.status_code == 403
    assert current_block() is None


@pytest.mark.usefixtures("neko_root")
def test_the_bearer_token_still_opens_them(internal_client):
    assert post(internal_client, "/internal/storage/startup/block").status_code == 200
    assert current_block() is not None


@pytest.mark.usefixtures("neko_root")
def test_a_remote_caller_gets_nothing_from_the_token_on_the_chat_routes(client):
    response = client.get("/new_dialog/小天", REMOTE_ADDR="192.0.2.10", HTTP_X_CSRF_TOKEN=CSRF_TOKEN)
    assert response.status_code == 401


def test_standalone_the_launch_token_and_native_loopback_open_nothing(client, settings):
    settings.NEKO_INSTANCE_ID = INSTANCE_ID
    settings.NEKO_AUTOSTART_CSRF_TOKEN = CSRF_TOKEN
    token = post(client, "/internal/storage/startup/block", HTTP_X_CSRF_TOKEN=CSRF_TOKEN, **NATIVE)
    native = post(client, "/internal/storage/startup/block", **NATIVE)
    assert token.status_code == 401 and native.status_code == 401
    assert current_block() is None


@pytest.mark.parametrize("installed", [True, False])
def test_health_answers_the_launchers_instance_id(client, settings, tmp_path, installed):
    settings.NEKO_INSTANCE_ID = INSTANCE_ID
    if installed:
        settings.NEKOMEM_NEKO_ROOT = tmp_path
    body = client.get("/health").json()
    assert body["instance_id"] == INSTANCE_ID
    assert body["app"] == "N.E.K.O" and body["service"] == "memory" and body["status"] == "ok"


def test_health_without_the_launcher_keeps_its_own_id(client, settings):
    settings.NEKO_INSTANCE_ID = ""
    assert client.get("/health").json()["instance_id"] not in {"", INSTANCE_ID}
