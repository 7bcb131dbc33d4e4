"""Theater (interactive story) capsules as a current N.E.K.O. main server archives and manages them
(reference §1.7, §2.1, §3.1.2): ``/cache`` with one capsule message, ``theater/stories``,
``theater/forget`` and ``theater/retract``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from facts.models import Fact
from nekomem.journal.models import OutboxOp
from nekomem.runtime.switches import POWERFUL_MEMORY, RECENT_AUTO_REVIEW, switch_set
from recent.models import RawMessage, TheaterCapsule
from tests.recent.scripting import dialogue_of, summary, window
from tests.support.dataset import english_messages

pytestmark = pytest.mark.django_db

STORY = "story-lighthouse"
SUMMARY = "In the lighthouse story, Mel found the keeper's lost logbook and chose to stay until dawn."


def capsule_message(
    *, session: str = "s1", revision: int = 3, summary_text: str = SUMMARY, story: str = STORY
) -> dict[str, Any]:
    """The message as the main server serialises it (LangChain ``messages_to_dict`` + metadata)."""
    return {
        "type": "system",
        "data": {
            "content": summary_text,
            "additional_kwargs": {},
            "response_metadata": {},
            "type": "system",
            "name": None,
            "id": None,
            "metadata": {
                "source": "theater_numeric_v2",
                "memory_tier": "episode_summary",
                "message_kind": "episode_summary",
                "story_id": story,
                "story_title": "The Lighthouse",
                "session_id": session,
                "archive_through_revision": revision,
                "episode_summary": summary_text,
            },
        },
    }


def archive(client, name: str = "Mel", *, message: dict | None = None, **fields: Any):
    body: dict[str, Any] = {
        "input_history": json.dumps([message or capsule_message()], ensure_ascii=False),
        "language": "en",
        **fields,
    }
    return client.post(f"/cache/{name}", data=json.dumps(body), content_type="application/json")


def ordinary(client, name: str, messages: list[dict], route: str = "cache", **fields: Any):
    body = {"input_history": json.dumps(messages, ensure_ascii=False), "language": "en", **fields}
    return client.post(f"/{route}/{name}", data=json.dumps(body), content_type="application/json")


@pytest.fixture(autouse=True)
def _review_off(db):
    switch_set(name=RECENT_AUTO_REVIEW, enabled=False)


def test_the_same_archive_twice_is_one_capsule(client, internal_client):
    first = archive(client, idempotency_key="archive-1", theater_archive_attempt=1)
    again = archive(client, idempotency_key="archive-1", theater_archive_attempt=1)
    assert first.json() == again.json() == {"status": "cached", "count": 1}
    assert TheaterCapsule.objects.count() == 1
    # The capsule stays out of the window and the raw log, and starts no post-turn work.
    assert window("Mel") == [] and RawMessage.objects.count() == 0 and OutboxOp.objects.count() == 0

    stories = internal_client.get("/internal/memory/Mel/theater/stories").json()
    assert stories["ok"] is True
    (story,) = stories["stories"]
    assert story == {"story_id": STORY, "title": "The Lighthouse", "memory_summaries": [SUMMARY]}


def test_stories_list_plain_summaries_per_session_skip_empty_ones_and_fall_back_to_the_id(
    client, internal_client
):
    archive(client, message=capsule_message(session="s1", summary_text="  first session  "))
    archive(client, message=capsule_message(session="s2", summary_text="   "))
    archive(client, message=capsule_message(session="s3", summary_text="third session"))
    untitled = capsule_message(story="story-forest", summary_text="the forest")
    del untitled["data"]["metadata"]["story_title"]
    archive(client, message=untitled)
    stories = internal_client.get("/internal/memory/Mel/theater/stories").json()
    assert stories == {
        "ok": True,
        "stories": [
            {
                "story_id": STORY,
                "title": "The Lighthouse",
                "memory_summaries": ["first session", "third session"],
            },
            {"story_id": "story-forest", "title": "story-forest", "memory_summaries": ["the forest"]},
        ],
    }


def _post(internal_client, route: str, body: dict[str, Any]):
    return internal_client.post(
        f"/internal/memory/Mel/theater/{route}", data=json.dumps(body), content_type="application/json"
    )


def test_forget_and_retract_validate_their_ids_and_numbers_as_the_original(client, internal_client):
    archive(client)
    for blank in ("", "   "):
        refused = _post(internal_client, "forget", {"story_id": blank})
        assert refused.status_code == 422
        assert refused.json()["error_code"] == "story_id_required"
    assert _post(internal_client, "forget", {"story_id": "s" * 257}).status_code == 422
    assert _post(internal_client, "forget", {"story_id": 5}).status_code == 422
    forgot = _post(internal_client, "forget", {"story_id": "s" * 256})
    assert forgot.status_code == 200 and forgot.json()["removed_recent"] == 0

    valid = {"story_id": STORY, "session_id": "s1", "archive_through_revision": 3}
    for field in ("story_id", "session_id"):
        refused = _post(internal_client, "retract", {**valid, field: "  "})
        assert refused.status_code == 422
        assert refused.json()["error_code"] == "theater_episode_identity_required"
        assert _post(internal_client, "retract", {**valid, field: "x" * 257}).status_code == 422
    for bad in (
        {"archive_through_revision": -1},
        {"archive_through_revision": None},
        {"archive_request_id": "r" * 161},
        {"archive_request_id": 3},
        {"archive_attempt": -1},
        {"archive_attempt": "two"},
    ):
        refused = _post(internal_client, "retract", {**valid, **bad})
        assert refused.status_code == 422, bad
        assert refused.json()["ok"] is False
    assert TheaterCapsule.objects.count() == 1  # nothing refused removed anything
    edge = {**valid, "archive_request_id": "r" * 160, "archive_attempt": 0}
    retracted = _post(internal_client, "retract", edge)
    assert retracted.json() == {"ok": True, "removed_recent": 1, "removed_time_index": 0}
    assert "forget_marker" not in retracted.json()


def test_a_later_revision_replaces_the_sessions_capsule_and_an_older_one_does_not(client):
    archive(client, message=capsule_message(revision=3))
    archive(client, message=capsule_message(revision=5, summary_text="revision five"))
    archive(client, message=capsule_message(revision=4, summary_text="a stale revision four"))
    capsule = TheaterCapsule.objects.get()
    assert (capsule.archive_through_revision, capsule.summary) == (5, "revision five")
    archive(client, message=capsule_message(session="s2", summary_text="second session"))
    assert TheaterCapsule.objects.count() == 2


def test_capsule_errors_are_the_originals(client):
    ordinary_batch = [{"type": "human", "data": {"content": "hi"}}]
    keyed = ordinary(client, "Mel", ordinary_batch, idempotency_key="k")
    assert keyed.json() == {"status": "error", "message": "idempotency_key_requires_theater_episode"}
    too_long = archive(client, idempotency_key="k" * 161)
    assert too_long.json() == {"status": "error", "message": "idempotency_key_too_long"}
    assert archive(client, idempotency_key="k" * 160).json() == {"status": "cached", "count": 1}
    marker = archive(client, theater_forget_marker="m" * 129)
    assert marker.json()["status"] == "error"
    assert window("Mel") == []  # the refused ordinary batch stored nothing


def test_a_capsule_survives_thirty_turns_with_compression_and_is_never_summarised(
    client, llm_server, django_capture_on_commit_callbacks
):
    archive(client)
    messages = english_messages(60)  # thirty turns
    for start in range(0, 60, 2):
        assert ordinary(client, "Mel", messages[start : start + 2]).json()["status"] == "cached"
    llm_server.script(summary("Emily and Mel talked about their week."))
    with django_capture_on_commit_callbacks(execute=True):
        assert ordinary(client, "Mel", [], route="settle").json() == {"status": "settled"}
    (body,) = llm_server.bodies  # one compression through the loopback LLM
    assert "lighthouse" not in dialogue_of(body).lower()  # kept out of what is summarised
    assert window("Mel")[0][1].endswith("Emily and Mel talked about their week.")
    assert TheaterCapsule.objects.get().summary == SUMMARY

    new_dialog = client.get("/new_dialog/Mel").content.decode()
    assert f"[Theater recap] “The Lighthouse”: {SUMMARY}" in new_dialog
    history = client.get("/get_recent_history/Mel").content.decode()
    assert f"[Theater recap] “The Lighthouse”: {SUMMARY}" in history.splitlines()[1]


def test_no_fact_is_extracted_from_a_capsule(client, llm_server, django_capture_on_commit_callbacks):
    # Powerful memory off: an ordinary /cache extracts facts per turn through the LLM at once. A
    # capsule must not: the loopback server answers nothing and fails the test on any request.
    switch_set(name=POWERFUL_MEMORY, enabled=False)
    with django_capture_on_commit_callbacks(execute=True):
        assert archive(client).json() == {"status": "cached", "count": 1}
    assert llm_server.requests == []
    assert Fact.objects.count() == 0 and OutboxOp.objects.count() == 0


def test_retract_then_a_late_archive_is_retracted(client, internal_client):
    archive(client, idempotency_key="req-7", theater_archive_attempt=2)
    retract = {
        "story_id": STORY,
        "session_id": "s1",
        "archive_through_revision": 3,
        "archive_request_id": "req-7",
        "archive_attempt": 2,
    }
    url = "/internal/memory/Mel/theater/retract"
    answer = internal_client.post(url, data=json.dumps(retract), content_type="application/json")
    assert answer.json() == {"ok": True, "removed_recent": 1, "removed_time_index": 0}
    again = internal_client.post(url, data=json.dumps(retract), content_type="application/json")
    assert again.json() == {"ok": True, "removed_recent": 0, "removed_time_index": 0}  # idempotent
    late = archive(client, idempotency_key="req-7", theater_archive_attempt=1)
    assert late.json() == {"status": "retracted", "count": 0}
    assert TheaterCapsule.objects.count() == 0
    # The story goes on: a later revision of the session is a new archive and is kept.
    later = archive(client, message=capsule_message(revision=9), idempotency_key="req-8")
    assert later.json() == {"status": "cached", "count": 1}


def test_forget_then_only_a_capsule_with_the_new_marker_is_kept(client, internal_client):
    archive(client)
    archive(client, message=capsule_message(session="s2"))
    url = "/internal/memory/Mel/theater/forget"
    forgot = internal_client.post(url, data=json.dumps({"story_id": STORY}), content_type="application/json")
    body = forgot.json()
    assert (body["ok"], body["removed_recent"], body["removed_time_index"]) == (True, 2, 0)
    marker = body["forget_marker"]
    assert marker and len(marker) <= 128

    without = archive(client, message=capsule_message(session="s3"))
    assert without.json() == {"status": "retracted", "count": 0}
    with_marker = archive(client, message=capsule_message(session="s3"), theater_forget_marker=marker)
    assert with_marker.json() == {"status": "cached", "count": 1}
    assert list(TheaterCapsule.objects.values_list("session_id", flat=True)) == ["s3"]
    # Another story is not affected.
    other = archive(client, message=capsule_message(story="story-forest"))
    assert other.json() == {"status": "cached", "count": 1}


def test_story_routes_answer_404_for_an_unknown_character(internal_client):
    response = internal_client.get("/internal/memory/nobody/theater/stories")
    assert response.status_code == 404 and response.json()["error_code"] == "character_not_found"
    forget = internal_client.post(
        "/internal/memory/nobody/theater/forget",
        data=json.dumps({"story_id": STORY}),
        content_type="application/json",
    )
    assert forget.status_code == 404


def test_the_recent_page_shows_capsules_and_its_delete_forgets_the_story(client, admin_client):
    archive(client)
    page = admin_client.get("/browse/Mel/recent/").content.decode()
    assert "lost logbook" in page and 'data-testid="capsule"' in page
    capsule = TheaterCapsule.objects.get()
    response = admin_client.post(f"/browse/Mel/recent/theater/{capsule.pk}/forget/")
    assert response.status_code == 302
    assert TheaterCapsule.objects.count() == 0
    # As theater/forget: a later capsule without the new marker is dropped.
    assert archive(client).json() == {"status": "retracted", "count": 0}


def test_capsules_travel_in_recent_json_through_export_and_import(client, tmp_path):
    from django.core.management import call_command

    ordinary(client, "Mel", [{"type": "human", "data": {"content": "hello"}}])
    archive(client, message=capsule_message(revision=4))
    call_command("export_memory", str(tmp_path / "out"), verbosity=0)
    exported = json.loads((tmp_path / "out" / "Mel" / "recent.json").read_text(encoding="utf-8"))
    assert [m["type"] for m in exported] == ["human", "system"]
    assert exported[1]["data"]["metadata"]["archive_through_revision"] == 4

    # An original recent.json holds the capsule among the messages: it comes back as a capsule.
    folder = tmp_path / "in" / "Rin"
    folder.mkdir(parents=True)
    (folder / "recent.json").write_text(json.dumps([exported[1], exported[0]]), encoding="utf-8")
    call_command("import_memory", str(tmp_path / "in"), verbosity=0)
    assert window("Rin") == [("human", "hello")]
    capsule = TheaterCapsule.objects.get(character__name="Rin")
    assert (capsule.story_id, capsule.archive_through_revision, capsule.summary) == (STORY, 4, SUMMARY)
    call_command("import_memory", str(tmp_path / "in"), verbosity=0)  # again: nothing changes
    assert TheaterCapsule.objects.get(character__name="Rin").pk == capsule.pk
