"""Every group-chat route reads its body through the one parser: a body that is not a JSON object is
refused the same way on a scoped route, an identity route and a trust route."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

ROUTES = [
    "/internal/memory/小雪/scoped_history",
    "/internal/memory/小雪/scoped_facts",
    "/internal/identity/scope",
    "/internal/trust/waive_legacy_barrier",
]


@pytest.mark.parametrize("path", ROUTES)
def test_a_body_that_is_not_an_object_is_refused_alike_on_every_route(internal_client, path: str) -> None:
    answer = internal_client.post(path, data="[1, 2]", content_type="application/json")
    assert (answer.status_code, answer.json()) == (422, {"detail": "body must be a JSON object"})


@pytest.mark.parametrize("path", ROUTES)
def test_a_body_that_is_not_json_is_refused_alike_on_every_route(internal_client, path: str) -> None:
    answer = internal_client.post(path, data="{oops", content_type="application/json")
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith("body is not valid JSON: ")
