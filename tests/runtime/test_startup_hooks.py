"""The runtime reaches the apps through hooks: continue, /reload and /release_character call the
reread hooks (install mode's folder re-read is one), continue before the block lifts."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping

import pytest

from nekomem.runtime import startup
from nekomem.runtime.models import StorageState
from tests.characters.factories import CharacterFactory

pytestmark = pytest.mark.django_db


class Reread:
    def __init__(self) -> None:
        self.calls: list[tuple[list[str] | None, bool]] = []

    def __call__(self, names: Collection[str] | None) -> Mapping[str, object] | None:
        blocked = StorageState.objects.filter(pk=1, blocked=True).exists()
        self.calls.append((sorted(names) if names is not None else None, blocked))
        return {"taken_in": sorted(names or ["everyone"])}


@pytest.fixture
def reread() -> Iterator[Reread]:
    hook = Reread()
    startup.register_reread_hook("test_folder", hook)
    yield hook
    startup.unregister_reread_hook("test_folder")


def test_continue_runs_the_reread_hooks_while_blocked_and_answers_what_they_took_in(
    internal_client, reread: Reread
) -> None:
    internal_client.post("/internal/storage/startup/block", data="{}", content_type="application/json")
    response = internal_client.post("/internal/storage/startup/continue", content_type="application/json")
    assert response.status_code == 200
    assert response.json() == {"ok": True, "limited_mode": False, "test_folder": {"taken_in": ["everyone"]}}
    assert reread.calls == [(None, True)]  # before the block lifted
    assert StorageState.objects.get(pk=1).blocked is False


def test_reload_rereads_everything_and_release_rereads_one_character(
    client, internal_client, reread: Reread
) -> None:
    CharacterFactory(name="小天")
    assert internal_client.post("/reload", data="{}", content_type="application/json").status_code == 200
    assert client.post("/release_character/小天", content_type="application/json").status_code == 200
    assert reread.calls == [(None, False), (["小天"], False)]


def test_without_a_reread_hook_continue_answers_as_before(internal_client) -> None:
    internal_client.post("/internal/storage/startup/block", data="{}", content_type="application/json")
    response = internal_client.post("/internal/storage/startup/continue", content_type="application/json")
    assert response.json() == {"ok": True, "limited_mode": False}
