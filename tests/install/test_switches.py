"""The switches live in the install's core_config.json: read on every check, written by our toggles."""

from __future__ import annotations

import json

import pytest

from nekomem.runtime.models import FeatureSwitch
from nekomem.runtime.switches import POWERFUL_MEMORY, RECENT_AUTO_REVIEW, switch_enabled
from reflections.models import Reflection
from tests.reflections.factories import ReflectionFactory

pytestmark = pytest.mark.django_db


def core_config(root):
    return root / "config" / "core_config.json"


def read_config(root) -> dict:
    return json.loads(core_config(root).read_text(encoding="utf-8"))


def write_config(root, data) -> None:
    core_config(root).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def test_a_switch_flipped_in_the_file_takes_effect_at_the_next_check(neko_root):
    assert switch_enabled(POWERFUL_MEMORY) and switch_enabled(RECENT_AUTO_REVIEW)
    write_config(neko_root, {**read_config(neko_root), POWERFUL_MEMORY: False})
    assert not switch_enabled(POWERFUL_MEMORY)
    assert switch_enabled(RECENT_AUTO_REVIEW)
    write_config(neko_root, {**read_config(neko_root), RECENT_AUTO_REVIEW: False, POWERFUL_MEMORY: True})
    assert switch_enabled(POWERFUL_MEMORY) and not switch_enabled(RECENT_AUTO_REVIEW)


def test_a_missing_key_or_file_means_on(neko_root):
    write_config(neko_root, {"coreApi": "qwen"})
    assert switch_enabled(POWERFUL_MEMORY) and switch_enabled(RECENT_AUTO_REVIEW)
    core_config(neko_root).unlink()
    assert switch_enabled(POWERFUL_MEMORY)


def test_the_database_row_does_not_count_in_install_mode(neko_root):
    FeatureSwitch.objects.create(name=POWERFUL_MEMORY, enabled=False)
    assert switch_enabled(POWERFUL_MEMORY)


def test_the_api_toggle_writes_the_file_and_keeps_every_other_key(client, neko_root):
    before = read_config(neko_root)
    response = client.post("/api/v1/review_config", data={"enabled": False}, content_type="application/json")
    assert response.status_code == 200 and response.json() == {"enabled": False}
    after = read_config(neko_root)
    assert after == {**before, RECENT_AUTO_REVIEW: False}
    assert not switch_enabled(RECENT_AUTO_REVIEW)
    assert not list(core_config(neko_root).parent.glob(".core_config.json.*"))  # no temp file left


def test_turning_powerful_memory_off_resets_then_writes_the_file(client, neko_root):
    reflection = ReflectionFactory.create(status=Reflection.Status.CONFIRMED)
    response = client.post(
        "/api/v1/powerful_memory_config", data={"enabled": False}, content_type="application/json"
    )
    assert response.status_code == 200 and response.json() == {"enabled": False}
    assert read_config(neko_root)[POWERFUL_MEMORY] is False
    reflection.refresh_from_db()
    assert reflection.confirmed_at is not None


def test_a_broken_file_is_not_overwritten(client, neko_root):
    core_config(neko_root).write_text('{"coreApi": "qw', encoding="utf-8")
    response = client.post("/api/v1/review_config", data={"enabled": False}, content_type="application/json")
    assert response.status_code == 409
    assert core_config(neko_root).read_text(encoding="utf-8") == '{"coreApi": "qw'
    assert not FeatureSwitch.objects.filter(name=RECENT_AUTO_REVIEW).exists()
