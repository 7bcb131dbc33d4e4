"""The speaker-trust ledger on ``scoped_history`` (reference §1.6 "Trust fields", §2.4 provenance):
validation, the trust block, activity counted once per event id, persisted true / null / false, the
legacy barrier, and a keyed write whose trust write is journalled and replayed."""

from __future__ import annotations

from typing import Any

import pytest

from facts.models import Fact
from groupchat.identity.models import Account, ActivityEvent
from groupchat.models import ScopedWriteKey
from tests.conftest import history
from tests.groupchat.identity.support import ledger_refuses_writes
from tests.groupchat.test_scoped_history import batch_reply, facts_reply
from tests.groupchat.test_scoped_routes import ALICE, post

pytestmark = pytest.mark.django_db
ALICE_KEY = "group_participant:qq:7788:1001"


def events(*ids: str, count: int = 1) -> list[dict[str, Any]]:
    return [{"id": f"activity_{i:0>16}", "count": count} for i in ids]


def body(**trust: Any) -> dict[str, Any]:
    return {
        "input_history": history(("human", "我下周去东京")),
        "subject": ALICE,
        "speaker_label": "Alice",
        "speaker_id": "qq:1001",
        **trust,
    }


@pytest.fixture
def no_barrier(internal_client) -> None:
    """The QQ plugin has pushed its (empty) legacy profiles: server-derived trust is live."""
    answer = internal_client.post(
        "/internal/trust/waive_legacy_barrier", {"platform": "qq"}, content_type="application/json"
    )
    assert answer.status_code == 200 and answer.json()["barrier"] == "waived"


@pytest.mark.parametrize(
    "trust",
    [
        {"speaker_tier": "Admin"},
        {"speaker_tier": "normal", "speaker_base_trust": 0.5},
        {"speaker_trust": 0.4, "speaker_tier": "normal"},
        {"speaker_trust": 0.4, "speaker_base_trust": 0.4},
        {"speaker_base_trust": 1.5},
        {"speaker_base_trust": True},
        {"speaker_tier": "normal", "speaker_id": None},
        {"speaker_tier": "normal", "speaker_id": "acct-1001"},
        {"speaker_tier": "normal", "speaker_id": "qq:有 空格"},
        {"speaker_activity_events": events("1")},
        {"speaker_trust": 0.4, "speaker_activity_events": events("1")},
        {"speaker_tier": "normal", "speaker_activity_events": [{"id": "short", "count": 1}]},
        {"speaker_tier": "normal", "speaker_activity_events": [{"id": "activity|0000000001", "count": 1}]},
        {"speaker_tier": "normal", "speaker_activity_events": [{"id": "activity_0000000001", "count": 0}]},
        {"speaker_tier": "normal", "speaker_activity_events": [{"id": "activity_0000000001", "count": 1001}]},
        {"speaker_tier": "normal", "speaker_activity_events": {"id": "activity_0000000001"}},
        {"speaker_tier": "normal", "speaker_activity_events": events(*map(str, range(201)))},
        {"speaker_channel": "napcat"},
        {"speaker_tier": "normal", "speaker_channel": "NapCat"},
        {"speaker_tier": "normal", "speaker_channel": "a" * 17},
        {"speaker_tier": "trusted", "speaker_is_owner": True},
        {"speaker_base_trust": 0.5, "speaker_is_owner": True},
        {"speaker_tier": "admin", "speaker_is_owner": "yes"},
    ],
)
def test_each_trust_violation_is_422(internal_client, llm_server, trust) -> None:
    answer = post(internal_client, "scoped_history", body(**trust))
    assert answer.status_code == 422, answer.content
    assert set(answer.json()) == {"detail"} and llm_server.requests == []
    assert not Account.objects.exists()


def test_a_batch_takes_trust_per_segment_never_top_level(internal_client, llm_server) -> None:
    segment = {k: v for k, v in body().items()}
    answer = post(internal_client, "scoped_history", {"segments": [segment], "speaker_tier": "normal"})
    assert answer.status_code == 422 and llm_server.requests == []


def test_a_server_source_is_resolved_stamped_and_counted(internal_client, llm_server, no_barrier) -> None:
    llm_server.script(facts_reply("Alice 下周去东京"))
    trust = {
        "speaker_tier": "normal",
        "speaker_activity_events": events("1", "2"),
        "speaker_channel": "napcat",
    }
    reply = post(internal_client, "scoped_history", body(**trust)).json()
    assert reply["status"] == "processed" and reply["created"] == 1
    assert reply["trust"] == {
        "resolved": 0.5,  # the ledger as the request found it: no activity yet
        "persisted": True,
        "signals_applied": 1,
        "activity_applied": 2,
        "gated": None,
        "channel_collision": False,
    }
    fact = Fact.with_subjects.get()
    assert fact.extra["speaker_id"] == "qq:1001" and fact.extra["speaker_trust"] == 0.5
    account = Account.objects.get(account_id="qq:1001")
    assert account.tier == "normal" and account.message_count == 2 and account.channels == ["napcat"]


def test_a_grown_retry_never_counts_a_message_twice(internal_client, llm_server, no_barrier) -> None:
    llm_server.script(facts_reply("Alice 下周去东京"), facts_reply("Alice 下周去东京", "Alice 喜欢寿司"))
    first = post(
        internal_client,
        "scoped_history",
        body(speaker_tier="normal", speaker_activity_events=events("1", "2")),
    )
    assert first.json()["trust"]["activity_applied"] == 2
    # The client did not see the answer, and its buffer grew by one message before the retry.
    grown = body(speaker_tier="normal", speaker_activity_events=events("1", "2", "3"))
    again = post(internal_client, "scoped_history", grown).json()
    assert again["trust"]["activity_applied"] == 1 and again["trust"]["persisted"] is True
    assert again["trust"]["resolved"] == pytest.approx(0.502)  # two counted messages before this request
    assert Account.objects.get().message_count == 3 and ActivityEvent.objects.count() == 3
    assert Fact.with_subjects.count() == 2  # the first fact is not stored twice


def test_nothing_about_trust_answers_persisted_null(internal_client, llm_server) -> None:
    llm_server.script(facts_reply("Alice 下周去东京"), facts_reply("Alice 喜欢寿司"))
    plain = post(internal_client, "scoped_history", body()).json()
    assert plain["trust"]["persisted"] is None and plain["trust"]["resolved"] is None
    legacy = post(internal_client, "scoped_history", body(speaker_trust=0.35)).json()
    assert legacy["trust"]["persisted"] is None and legacy["trust"]["resolved"] == 0.35
    assert Fact.with_subjects.get(text="Alice 喜欢寿司").extra["speaker_trust"] == 0.35
    assert not Account.objects.exists()


def test_a_pending_legacy_barrier_gates_server_trust(internal_client, llm_server) -> None:
    llm_server.script(facts_reply("Alice 下周去东京"))
    reply = post(
        internal_client, "scoped_history", body(speaker_tier="admin", speaker_activity_events=events("1"))
    )
    trust = reply.json()["trust"]
    assert trust["gated"] == "legacy_import_pending" and trust["persisted"] is None
    assert trust["resolved"] is None and trust["activity_applied"] == 0
    assert "speaker_trust" not in Fact.with_subjects.get().extra  # arbitration abstains
    assert not Account.objects.exists()


def test_a_failed_ledger_write_answers_persisted_false_and_a_retry_persists(
    internal_client, llm_server, no_barrier
) -> None:
    llm_server.script(facts_reply("Alice 下周去东京"), facts_reply("Alice 下周去东京"))
    request = body(speaker_tier="trusted", speaker_activity_events=events("1", "2"))
    with ledger_refuses_writes():
        failed = post(internal_client, "scoped_history", request)
    assert failed.status_code == 200
    assert failed.json()["trust"]["persisted"] is False and failed.json()["trust"]["activity_applied"] == 0
    assert Fact.with_subjects.count() == 1 and not Account.objects.exists()  # all of the trust write or none
    retried = post(internal_client, "scoped_history", request).json()
    assert retried["trust"]["persisted"] is True and retried["trust"]["activity_applied"] == 2
    assert Fact.with_subjects.count() == 1 and Account.objects.get().message_count == 2


def test_a_channel_collision_is_reported(internal_client, llm_server, no_barrier) -> None:
    llm_server.script(facts_reply("a"), facts_reply("b"))
    post(internal_client, "scoped_history", body(speaker_tier="normal", speaker_channel="napcat"))
    other = post(
        internal_client, "scoped_history", body(speaker_tier="normal", speaker_channel="open")
    ).json()
    assert other["trust"]["channel_collision"] is True and other["trust"]["persisted"] is True
    assert Account.objects.get().channels == ["napcat", "open"]


def test_the_owner_is_trusted_fully(internal_client, llm_server, no_barrier) -> None:
    llm_server.script(facts_reply("主人下周去东京"))
    reply = post(internal_client, "scoped_history", body(speaker_tier="admin", speaker_is_owner=True)).json()
    assert reply["trust"]["resolved"] == 1.0 and Account.objects.get().is_owner


def test_a_batch_answers_trust_per_segment(internal_client, llm_server, no_barrier) -> None:
    bob = {"subject_kind": "group_participant", "subject_id": "qq:7788:1002"}
    # One call covers the batch; the model answered the first segment and skipped the second.
    llm_server.script(batch_reply((1, ["Alice 下周去东京"])))
    segments = [
        {**body(speaker_tier="trusted", speaker_activity_events=events("a1"))},
        {
            "input_history": history(("human", "我喜欢下棋")),
            "subject": bob,
            "speaker_label": "Bob",
            "speaker_id": "qq:1002",
            "speaker_tier": "normal",
            "speaker_activity_events": events("b1"),
        },
    ]
    reply = post(internal_client, "scoped_history", {"segments": segments}).json()
    first, second = reply["segments"]
    assert (
        first["status"] == "ok" and first["trust"]["persisted"] is True and first["trust"]["resolved"] == 0.7
    )
    assert [e["type"] for e in first["trust_events"]] == ["source", "activity"]
    # The failed segment's messages are counted when its retry succeeds, not now.
    assert second["status"] == "failed" and second["trust"]["persisted"] is None
    assert reply["trust"]["persisted"] is True and reply["trust"]["activity_applied"] == 1
    assert list(Account.objects.values_list("account_id", flat=True)) == ["qq:1001"]


def keyed(**trust: Any) -> dict[str, Any]:
    return {**body(**trust), "idempotency_key": "k-trust", "subject_epochs": {ALICE_KEY: 0}}


def test_a_keyed_write_journals_its_trust_write_and_replays_it(
    internal_client, llm_server, no_barrier
) -> None:
    llm_server.script(facts_reply("Alice 下周去东京"))
    request = keyed(speaker_tier="normal", speaker_activity_events=events("1", "2", "3"))
    with ledger_refuses_writes():
        first = post(internal_client, "scoped_history", request).json()
    assert first["trust"]["persisted"] is False and first["created"] == 1
    row = ScopedWriteKey.objects.get(key="k-trust")
    assert row.status == "pending" and row.trust is not None
    assert row.trust[0]["tier"] == "normal" and len(row.trust[0]["events"]) == 3
    asked = len(llm_server.requests)
    replayed = post(internal_client, "scoped_history", request).json()
    assert len(llm_server.requests) == asked  # the journal, not the model
    assert replayed["trust"]["persisted"] is True and replayed["trust"]["activity_applied"] == 3
    assert replayed["created"] == 0 and Fact.with_subjects.count() == 1
    assert ScopedWriteKey.objects.get(key="k-trust").status == "done"
    done = post(internal_client, "scoped_history", request).json()
    assert done["duplicate"] is True and done["trust"] is None
    assert Account.objects.get().message_count == 3


def test_trust_inputs_are_part_of_a_keys_fingerprint(internal_client, llm_server, no_barrier) -> None:
    llm_server.script(facts_reply("Alice 下周去东京"))
    assert post(internal_client, "scoped_history", keyed(speaker_tier="normal")).status_code == 200
    other = post(internal_client, "scoped_history", keyed(speaker_tier="trusted"))
    assert other.status_code == 422 and "idempotency_key" in other.json()["detail"]
    owner = post(internal_client, "scoped_history", keyed(speaker_tier="admin", speaker_is_owner=True))
    assert owner.status_code == 422
