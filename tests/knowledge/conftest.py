from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from tests.knowledge.factories import fixture_pack, pack_bytes

FLAGS = ("ready", "enabled", "tool_available")


@pytest.fixture
def post(internal_client: Client) -> Callable[..., Any]:
    def send(route: str, body: Any = None, **extra: Any) -> Any:
        data = body if isinstance(body, bytes) else json.dumps(body if body is not None else {})
        return internal_client.post(
            f"/internal/knowledge/{route}",
            data=data,
            content_type=extra.pop("content_type", "application/json"),
            **extra,
        )

    return send


@pytest.fixture
def get(internal_client: Client) -> Callable[..., Any]:
    def fetch(route: str, **params: Any) -> Any:
        return internal_client.get(f"/internal/knowledge/{route}", params)

    return fetch


@pytest.fixture
def imported(post, django_capture_on_commit_callbacks) -> Callable[..., Any]:
    """Import a pack and run its job (the test's broker runs tasks inline at commit)."""

    def run(pack: dict[str, Any] | None = None) -> dict[str, Any]:
        with django_capture_on_commit_callbacks(execute=True):
            answer = post("packs/import", pack_bytes(pack or fixture_pack()))
        assert answer.status_code == 200
        return answer.json()

    return run
