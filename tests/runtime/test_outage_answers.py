"""During a storage outage every route answers JSON 503, never Django's HTML error page."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.runtime.outage_urls")]


@pytest.fixture
def client(client):
    client.raise_request_exception = False
    return client


@pytest.mark.parametrize("path", ["/database_gone", "/broker_gone", "/cache_during_outage"])
def test_an_outage_is_a_json_503(client, path):
    response = client.get(path)
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response.json()["error_code"] == "storage_unavailable"


def test_any_other_failure_is_a_json_500_without_a_traceback(client):
    response = client.get("/plain_bug")
    assert response.status_code == 500
    body = response.json()
    assert body["error_code"] == "server_error" and "Traceback" not in response.content.decode()
