"""schemathesis over the whole OpenAPI schema (wire routes and /api/v1), through the WSGI app.

At least 1 000 generated requests: none may answer 5xx, every 4xx carries a JSON error body, and the
store afterwards has no half-written turn and no orphan outbox op. The internal routes are called
without the secret, so nothing here can block storage or stop the process.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
import schemathesis
from django.core.serializers.json import DjangoJSONEncoder
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, given, settings
from schemathesis.core.result import Ok

from recent.selectors import turn_store_problems

pytestmark = pytest.mark.django_db

MIN_CASES = 1000
# Hypothesis stops early on operations with few distinct inputs; the rest make up the total.
EXAMPLES_PER_OPERATION = 60
WIRE_OPERATION_PREFIX = "wire_"


def load_schema() -> schemathesis.BaseSchema:
    generated = SchemaGenerator().get_schema(request=None, public=True)
    raw = json.loads(json.dumps(generated, cls=DjangoJSONEncoder))
    schema = schemathesis.openapi.from_dict(raw)
    schema.app = get_wsgi_application()  # the served application, middleware and all
    return schema


def json_error_body(response) -> bool:
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    return isinstance(body, dict) and any(key in body for key in ("message", "error", "detail", "errors"))


def schema_operations() -> list:
    operations = []
    for result in load_schema().get_all_operations():
        assert isinstance(result, Ok), result  # an operation schemathesis cannot read is a schema bug
        operations.append(result.ok())
    return operations


def test_schema_describes_every_wire_route():
    operations = {op.definition.raw.get("operationId") for op in schema_operations()}
    wire = {name for name in operations if name and name.startswith(WIRE_OPERATION_PREFIX)}
    assert {
        "wire_cache",
        "wire_process",
        "wire_renew",
        "wire_settle",
        "wire_new_dialog",
        "wire_query_memory",
        "wire_get_recent_history",
        "wire_last_conversation_gap",
        "wire_cancel_correction",
        "wire_health",
        "wire_reload",
        "wire_release_character",
        "wire_storage_block",
        "wire_storage_continue",
    } <= wire


def fuzz(operation, statuses: Counter[int], failures: list[str]) -> None:
    """Up to ``EXAMPLES_PER_OPERATION`` generated requests to one operation."""

    @given(case=operation.as_strategy())
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case) -> None:
        response = case.call(environ_overrides={"REMOTE_ADDR": "127.0.0.1"})  # the chat server, on loopback
        statuses[response.status_code] += 1
        where = f"{operation.method.upper()} {case.formatted_path}: {response.status_code}"
        if response.status_code >= 500:
            failures.append(f"{where} {response.content[:300]!r}")
        elif response.status_code >= 400 and not json_error_body(response):
            failures.append(f"{where} without a JSON error body: {response.content[:200]!r}")

    run()


@pytest.fixture
def connection_kept_across_requests():
    """What Django's test client does: the end of a request must not close the test's connection
    (and with it the transaction the test runs in)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.mark.usefixtures("connection_kept_across_requests")
def test_a_thousand_generated_requests_give_no_5xx_json_4xx_and_a_sound_store():
    statuses: Counter[int] = Counter()
    failures: list[str] = []
    for operation in schema_operations():
        fuzz(operation, statuses, failures)
    assert not failures, "\n".join(failures[:20])
    assert sum(statuses.values()) >= MIN_CASES, statuses
    assert statuses[200] > 100, statuses  # the generated requests reach the views, not only the checks
    assert turn_store_problems() == []
