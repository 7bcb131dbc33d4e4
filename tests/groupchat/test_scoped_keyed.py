"""Keyed ``scoped_history`` retries and forget fences (reference §1.6)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from facts.models import Fact
from groupchat.models import ScopedWriteKey
from groupchat.services import scoped_write_key_begin, scoped_write_key_journal, scoped_write_keys_prune
from nekomem.characters.models import Character
from tests.conftest import history
from tests.groupchat.test_scoped_history import facts_reply
from tests.groupchat.test_scoped_routes import ALICE, post
from tests.support.llm_server import error

pytestmark = pytest.mark.django_db
ALICE_KEY = "group_participant:qq:7788:1001"


def keyed(key: str = "k-1", epoch: int = 0, text: str = "我下周去东京", **more: Any) -> dict[str, Any]:
    return {
        "input_history": history(("human", text)),
        "subject": ALICE,
        "speaker_label": "Alice",
        "idempotency_key": key,
        "subject_epochs": {ALICE_KEY: epoch},
        **more,
    }


def test_a_finished_key_answers_duplicate_without_asking_the_model(internal_client, llm_server) -> None:
    llm_server.script(facts_reply("Alice 下周去东京"))
    first = post(internal_client, "scoped_history", keyed()).json()
    assert first["status"] == "processed" and first["created"] == 1
    # A new label is not a new request; the model is not asked again.
    again = post(internal_client, "scoped_history", keyed(speaker_label="Alice W.")).json()
    assert again["duplicate"] is True and again["created"] == 0 and again["trust"] is None
    assert again["fact_ids"] == first["fact_ids"] and len(llm_server.requests) == 1
    assert Fact.with_subjects.count() == 1
    reused = post(internal_client, "scoped_history", keyed(text="别的话"))
    assert reused.status_code == 422 and "idempotency_key" in reused.json()["detail"]


def test_a_pending_key_resumes_its_journal_without_the_model(internal_client, llm_server) -> None:
    llm_server.allow_unexpected = True  # unscripted: the provider fails
    assert post(internal_client, "scoped_history", keyed()).status_code == 502
    row = ScopedWriteKey.objects.get(key="k-1")
    assert row.status == "pending" and row.generated is None  # nothing journalled
    # The state a crash between the journal and the writes leaves behind.
    fact = {"text": "Alice 下周去东京", "importance": 6, "source": "user_observation", "entity": "master"}
    scoped_write_key_journal(row=row, generated=[[fact]])
    asked = len(llm_server.requests)
    resumed = post(internal_client, "scoped_history", keyed()).json()
    assert resumed["created"] == 1 and len(llm_server.requests) == asked
    mio = Character.objects.get(name="Mio")
    assert (
        scoped_write_key_begin(character_id=mio.pk, key="k-1", fingerprint=row.fingerprint).status == "done"
    )


def test_a_write_older_than_the_forget_epoch_is_dropped(internal_client, llm_server) -> None:
    assert post(internal_client, "scoped_forget", {"subject": ALICE, "forget_epoch": 5}).status_code == 200
    llm_server.script(facts_reply("Alice 下周去东京"), facts_reply("Alice 下周去东京"))
    stale = post(internal_client, "scoped_history", keyed(key="old", epoch=4)).json()
    assert stale["status"] == "processed" and stale["created"] == 0
    assert not Fact.with_subjects.exists()
    current = post(internal_client, "scoped_history", keyed(key="new", epoch=5)).json()
    assert current["created"] == 1


def test_a_failed_keyed_call_stays_pending_and_a_retry_completes(internal_client, llm_server) -> None:
    llm_server.script(error(500), error(500), error(500), facts_reply("Alice 下周去东京"))
    assert post(internal_client, "scoped_history", keyed()).status_code == 502
    assert ScopedWriteKey.objects.get(key="k-1").status == "pending"
    assert post(internal_client, "scoped_history", keyed()).json()["created"] == 1


@pytest.mark.parametrize(
    "change",
    [
        {"idempotency_key": "bad key!"},
        {"idempotency_key": "k" * 129},
        {"subject_epochs": None},
        {"subject_epochs": {"participant:qq:1": 1}},
        {"subject_epochs": {ALICE_KEY: -1}},
        {"speaker_is_owner": True},
        {"subject": {**ALICE, "scope": "custom"}, "subject_epochs": {ALICE_KEY: 1}},
    ],
)
def test_bad_keyed_requests_are_422(internal_client, llm_server, change) -> None:
    answer = post(internal_client, "scoped_history", {**keyed(), **change})
    assert answer.status_code == 422 and set(answer.json()) == {"detail"}
    assert llm_server.requests == []


def test_keys_are_kept_for_a_year(internal_client, llm_server) -> None:
    llm_server.script(facts_reply("Alice 下周去东京"))
    post(internal_client, "scoped_history", keyed())
    assert scoped_write_keys_prune(now=timezone.now() + timedelta(days=300)) == 0
    assert scoped_write_keys_prune(now=timezone.now() + timedelta(days=366)) == 1
    assert not ScopedWriteKey.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_unkeyed_write_overtaken_by_a_forget_is_dropped(internal_client, llm_server) -> None:
    def forget_while_extracting(_: Any) -> Any:
        # The plugin forgets the member while the digest is still with the model.
        forgot = post(
            Client(HTTP_AUTHORIZATION=internal_client.defaults["HTTP_AUTHORIZATION"]),
            "scoped_forget",
            {"subject": ALICE},
        )
        assert forgot.status_code == 200
        return facts_reply("Alice 下周去东京")

    post(internal_client, "scoped_facts", {"subject": ALICE, "facts": [{"text": "Alice 喜欢猫"}]})
    llm_server.script(forget_while_extracting)
    body = {"input_history": history(("human", "我下周去东京")), "subject": ALICE, "speaker_label": "Alice"}
    answer = post(internal_client, "scoped_history", body).json()
    assert answer["status"] == "processed" and answer["created"] == 0
    assert not Fact.with_subjects.exists()
    # Forgotten without an epoch: no fence to read back.
    epochs = internal_client.get("/internal/memory/Mio/forget_epochs", {"subject": [ALICE_KEY]}).json()
    assert epochs == {"epochs": {}}


def test_a_staged_keyed_write_is_listed_and_forgotten_with_its_subject(internal_client, llm_server) -> None:
    llm_server.allow_unexpected = True  # unscripted: the provider fails, the key stays pending
    assert post(internal_client, "scoped_history", keyed()).status_code == 502
    post(internal_client, "scoped_facts", {"subject": ALICE, "facts": [{"text": "Alice 喜欢猫"}]})
    rows = internal_client.get("/internal/memory/Mio/scoped_subjects", {"platform": "qq"}).json()["subjects"]
    assert [r["staged"] for r in rows] == [True]
    forgot = post(internal_client, "scoped_forget", {"subject": ALICE}).json()
    assert forgot["staged"] == 1 and not ScopedWriteKey.objects.exists()


def keyed_batch(key: str = "b-1") -> dict[str, Any]:
    from tests.groupchat.test_scoped_history import BOB

    return {
        "segments": [
            {"input_history": history(("human", "我下周去东京")), "subject": ALICE, "speaker_label": "Alice"},
            {"input_history": history(("human", "我喜欢下棋")), "subject": BOB, "speaker_label": "Bob"},
        ],
        "idempotency_key": key,
        "subject_epochs": {ALICE_KEY: 0, "group_participant:qq:7788:1002": 0},
    }


def test_a_keyed_batch_journals_the_one_generation_and_a_retry_reuses_it(internal_client, llm_server) -> None:
    from tests.groupchat.test_scoped_history import batch_reply

    llm_server.script(batch_reply((1, ["Alice 下周去东京"]), (2, ["Bob 喜欢下棋"])))
    first = post(internal_client, "scoped_history", keyed_batch()).json()
    assert [s["status"] for s in first["segments"]] == ["ok", "ok"]
    assert [s["created"] for s in first["segments"]] == [1, 1]
    assert len(llm_server.requests) == 1  # one call for the whole batch
    generated = ScopedWriteKey.objects.get(key="b-1").generated or []
    assert [[f["text"] for f in facts] for facts in generated] == [["Alice 下周去东京"], ["Bob 喜欢下棋"]]
    again = post(internal_client, "scoped_history", keyed_batch()).json()
    assert again["duplicate"] is True and [s["created"] for s in again["segments"]] == [0, 0]
    assert len(llm_server.requests) == 1 and Fact.with_subjects.count() == 2


def test_a_keyed_batch_with_a_skipped_segment_fails_whole_and_stays_pending(
    internal_client, llm_server
) -> None:
    from tests.groupchat.test_scoped_history import batch_reply

    llm_server.script(
        batch_reply((1, ["Alice 下周去东京"])), batch_reply((1, ["Alice 下周去东京"]), (2, ["Bob 喜欢下棋"]))
    )
    assert post(internal_client, "scoped_history", keyed_batch()).status_code == 502
    row = ScopedWriteKey.objects.get(key="b-1")
    assert row.status == "pending" and row.generated is None and not Fact.with_subjects.exists()
    done = post(internal_client, "scoped_history", keyed_batch()).json()
    assert [s["status"] for s in done["segments"]] == ["ok", "ok"] and Fact.with_subjects.count() == 2
    assert len(llm_server.requests) == 2


def test_forgetting_the_subject_leaves_no_text_in_its_finished_keys(internal_client, llm_server) -> None:
    llm_server.script(facts_reply("Alice 下周去东京"))
    assert post(internal_client, "scoped_history", keyed()).json()["status"] == "processed"
    assert "东京" in str(ScopedWriteKey.objects.get(key="k-1").generated)

    assert post(internal_client, "scoped_forget", {"subject": ALICE}).json()["status"] == "forgotten"
    row = ScopedWriteKey.objects.get(key="k-1")
    assert (row.generated, row.trust) == (None, None)
    # The retry of the finished key still answers from its record, and writes nothing back.
    again = post(internal_client, "scoped_history", keyed()).json()
    assert again["duplicate"] is True and Fact.with_subjects.count() == 0
