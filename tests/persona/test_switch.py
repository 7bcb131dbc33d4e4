from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from nekomem.runtime.switches import POWERFUL_MEMORY, switch_enabled
from reflections.models import Reflection
from tests.characters.factories import CharacterFactory
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db


def _confirmed_long_ago() -> list[Reflection]:
    long_ago = timezone.now() - timedelta(days=30)
    return [
        make_reflection(character=CharacterFactory(name=name), status="confirmed", confirmed_at=long_ago)
        for name in ("小天", "Tian")
    ]


@pytest.mark.parametrize("route", ["/api/memory/powerful_memory_config", "/api/v1/powerful_memory_config"])
def test_turning_off_restamps_every_confirmed_reflection_first(client, route):
    reflections = _confirmed_long_ago()
    before = timezone.now()
    response = client.post(route, data=json.dumps({"enabled": False}), content_type="application/json")
    assert response.status_code == 200 and response.json() == {"enabled": False}
    assert not switch_enabled(POWERFUL_MEMORY)
    for reflection in reflections:
        reflection.refresh_from_db()
        assert reflection.confirmed_at is not None and reflection.confirmed_at >= before
    assert client.get(route).json() == {"enabled": False}


def test_turning_on_leaves_confirmed_at_alone(client):
    reflections = _confirmed_long_ago()
    response = client.post(
        "/api/memory/powerful_memory_config",
        data=json.dumps({"enabled": True}),
        content_type="application/json",
    )
    assert response.json() == {"enabled": True}
    reflections[0].refresh_from_db()
    confirmed_at = reflections[0].confirmed_at
    assert confirmed_at is not None and confirmed_at < timezone.now() - timedelta(days=29)


def test_reset_confirmed_at_reports_the_count(internal_client, client):
    _confirmed_long_ago()
    make_reflection(character=CharacterFactory(name="Mio"), status="pending")
    assert client.post("/internal/memory/reset_confirmed_at").status_code in (401, 403)
    response = internal_client.post(
        "/internal/memory/reset_confirmed_at", data="{}", content_type="application/json"
    )
    assert response.json() == {"ok": True, "count": 2}
