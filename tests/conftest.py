from __future__ import annotations

import json

import pytest

from tests.support.llm_server import llm_server  # noqa: F401


@pytest.fixture(scope="session", autouse=True)
def _runtime_started(django_db_setup, django_db_blocker):
    """Finish startup once (migrations checked, events reconciled) so routes leave restricted mode."""
    from nekomem.runtime.state import startup_run

    with django_db_blocker.unblock():
        assert startup_run()


def history(*pairs: tuple[str, str]) -> str:
    """Build an ``input_history`` JSON string from (type, content) pairs."""
    return json.dumps(
        [{"type": kind, "data": {"content": content}} for kind, content in pairs], ensure_ascii=False
    )


@pytest.fixture
def post_history(client):
    def post(route: str, name: str, *pairs: tuple[str, str], language: str | None = None):
        body: dict = {"input_history": history(*pairs)}
        if language:
            body["language"] = language
        return client.post(f"/{route}/{name}", data=json.dumps(body), content_type="application/json")

    return post
