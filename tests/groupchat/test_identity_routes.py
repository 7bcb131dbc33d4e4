"""Identity and trust administration (reference §1.6): profiles, legacy profiles and the barrier,
reconciling from facts, linked accounts (at most 8 per platform, 409 beyond), unbinding with its
stranded rows, merging, and forgetting a person — and ``scoped_forget`` fanning out to a participant's
linked accounts on the same platform, never across platforms."""

from __future__ import annotations

import json
from typing import Any

import pytest

from facts.models import Fact
from groupchat.identity.models import Account, ActivityEvent, Entity
from tests.groupchat.test_scoped_routes import post, store

pytestmark = pytest.mark.django_db


def call(client: Any, route: str, body: dict[str, Any] | None = None) -> Any:
    return client.post(f"/internal/{route}", data=json.dumps(body or {}), content_type="application/json")


def ensure(client: Any, account_id: str) -> str:
    answer = call(client, "identity/accounts/ensure", {"account_id": account_id})
    assert answer.status_code == 200, answer.content
    return answer.json()["entity_id"]


def bind(client: Any, account_id: str, to: str) -> Any:
    return call(client, "identity/accounts/bind", {"account_id": account_id, "to_account_id": to})


def participant(account_id: str) -> dict[str, str]:
    return {"subject_kind": "participant", "subject_id": account_id}


def test_the_identity_routes_need_the_shared_secret(client) -> None:
    assert call(client, "identity/accounts/ensure", {"account_id": "qq:1"}).status_code in (401, 403)
    assert client.get("/internal/trust/profile?account_id=qq:1").status_code in (401, 403)


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("identity/accounts/ensure", {"account_id": "1001"}),
        ("identity/accounts/ensure", {}),
        ("identity/accounts/bind", {"account_id": "qq:1"}),
        ("identity/accounts/bind", {"account_id": "qq:1", "to_account_id": "nope"}),
        ("identity/accounts/unbind", {"account_id": ""}),
        ("identity/scope", {"account_id": "qq:"}),
        ("identity/entities/merge", {"entity_id": "ent_1"}),
        ("identity/entities/forget", {}),
        ("trust/waive_legacy_barrier", {"platform": "q q"}),
        ("trust/import_legacy_profiles", {"platform": "qq", "source": "has space", "profiles": {}}),
        ("trust/import_legacy_profiles", {"platform": "", "source": "s", "profiles": {}}),
        ("trust/import_legacy_profiles", {"platform": "qq", "source": "s", "profiles": []}),
        ("trust/import_legacy_profiles", {"platform": "qq", "source": "s", "final": "yes"}),
        (
            "trust/import_legacy_profiles",
            {"platform": "qq", "source": "s", "profiles": {str(i): {} for i in range(501)}},
        ),
    ],
)
def test_bad_requests_are_422(internal_client, route, body) -> None:
    answer = call(internal_client, route, body)
    assert answer.status_code == 422 and "detail" in answer.json(), answer.content


def test_unknown_ids_are_404(internal_client) -> None:
    assert call(internal_client, "identity/accounts/unbind", {"account_id": "qq:404"}).status_code == 404
    merge = {"entity_id": "ent_missing", "into_entity_id": "ent_other"}
    assert call(internal_client, "identity/entities/merge", merge).status_code == 404
    assert call(internal_client, "identity/entities/forget", {"entity_id": "ent_missing"}).status_code == 404
    assert internal_client.get("/internal/trust/profile?account_id=bad").status_code == 422


def test_ensure_and_profile(internal_client) -> None:
    unknown = internal_client.get("/internal/trust/profile?account_id=qq:1001").json()
    assert unknown["known"] is False and unknown["barrier"] == "pending" and unknown["persisted"] is None
    first = call(internal_client, "identity/accounts/ensure", {"account_id": "QQ:1001"}).json()
    assert first["persisted"] is True and first["created"] is True and first["account_id"] == "qq:1001"
    again = call(internal_client, "identity/accounts/ensure", {"account_id": "qq:1001"}).json()
    assert again["persisted"] is None and again["entity_id"] == first["entity_id"]
    profile = internal_client.get("/internal/trust/profile?account_id=qq:1001").json()
    assert profile["known"] is True and profile["resolved"] is None and profile["linked_accounts"] == []


def test_legacy_profiles_import_once_per_source_and_final_clears_the_barrier(internal_client) -> None:
    chunk = {
        "platform": "qq",
        "source": "qq_auto_reply.business_config.speaker_trust_profiles.v1",
        "profiles": {
            "1001": {
                "adjustment": -0.08,
                "message_count": 12,
                "processed_activity_events": ["activity_old1"],
            },
            "bad key": {"adjustment": 1},
        },
        "final": False,
    }
    first = call(internal_client, "trust/import_legacy_profiles", chunk).json()
    assert first["persisted"] is True and first["imported"] == ["qq:1001"] and first["barrier"] == "pending"
    assert first["skipped"] == [{"key": "bad key", "reason": "invalid_account_id"}]
    again = call(internal_client, "trust/import_legacy_profiles", {**chunk, "final": True}).json()
    assert again["imported"] == [] and again["barrier"] == "cleared"  # re-sent: nothing counted twice
    account = Account.objects.get(account_id="qq:1001")
    assert account.adjustment == pytest.approx(-0.08) and account.message_count == 12
    assert ActivityEvent.objects.filter(account=account, event_id="activity_old1").exists()
    waive = call(internal_client, "trust/waive_legacy_barrier", {"platform": "qq"}).json()
    assert waive == {"persisted": None, "platform": "qq", "barrier": "cleared"}


def test_reconcile_from_facts_recreates_the_speakers_the_facts_carry(internal_client, llm_server) -> None:
    store(internal_client, participant("qq:1001"), "Alice 喜欢猫")
    Fact.with_subjects.update(extra={"speaker_id": "discord:77", "speaker_label": "Alice"})
    answer = call(internal_client, "trust/reconcile_from_facts").json()
    assert answer["accounts_created"] == 1 and answer["persisted"] is True
    assert list(Account.objects.values_list("account_id", flat=True)) == ["discord:77"]
    assert call(internal_client, "trust/reconcile_from_facts").json()["persisted"] is None


def test_at_most_eight_accounts_per_platform_per_person(internal_client) -> None:
    ensure(internal_client, "qq:1")
    for n in range(2, 9):
        assert bind(internal_client, f"qq:{n}", "qq:1").json()["persisted"] is True
    answer = bind(internal_client, "qq:9", "qq:1")
    assert answer.status_code == 409 and answer.json()["persisted"] is None
    # Another platform has its own eight.
    assert bind(internal_client, "discord:1", "qq:1").status_code == 200
    entity = Account.objects.get(account_id="qq:1").entity
    assert entity.accounts.filter(platform="qq").count() == 8
    # A merge that would overflow a platform is refused whole.
    other = ensure(internal_client, "qq:20")
    bind(internal_client, "qq:21", "qq:20")
    merge = {"entity_id": other, "into_entity_id": entity.entity_id}
    assert call(internal_client, "identity/entities/merge", merge).status_code == 409
    assert Account.objects.get(account_id="qq:21").entity.entity_id == other


def test_bind_scope_merge_and_unbind_with_stranded_rows(internal_client) -> None:
    first = ensure(internal_client, "qq:1001")
    bound = bind(internal_client, "qq:1002", "qq:1001").json()
    assert bound["entity_id"] == first and bound["accounts"] == ["qq:1001", "qq:1002"]
    assert bind(internal_client, "qq:1002", "qq:1001").json()["persisted"] is None
    scope = call(internal_client, "identity/scope", {"account_id": "qq:1002"}).json()
    assert scope["canonical_account_id"] == "qq:1001" and scope["subject"]["subject_id"] == "qq:1001"
    profile = internal_client.get("/internal/trust/profile?account_id=qq:1002").json()
    assert profile["linked_accounts"] == ["qq:1001"]
    # What qq:1002 said was folded into the canonical participant: it stays there after the unbind.
    store(internal_client, participant("qq:1001"), "Alice 下周去东京", "Alice 喜欢猫")
    Fact.with_subjects.filter(text="Alice 喜欢猫").update(extra={"speaker_id": "qq:1002"})
    unbound = call(internal_client, "identity/accounts/unbind", {"account_id": "qq:1002"}).json()
    assert unbound["persisted"] is True and unbound["stranded_rows"] == 1
    assert unbound["former_entity_id"] == first and unbound["entity_id"] != first
    alone = call(internal_client, "identity/accounts/unbind", {"account_id": "qq:1002"}).json()
    assert alone["persisted"] is None and alone["stranded_rows"] == 0
    merged = call(
        internal_client,
        "identity/entities/merge",
        {"entity_id": unbound["entity_id"], "into_entity_id": first},
    ).json()
    assert merged["persisted"] is True and merged["merged_accounts"] == ["qq:1002"]
    assert not Entity.objects.filter(entity_id=unbound["entity_id"]).exists()


def test_scoped_forget_fans_out_to_linked_accounts_on_the_same_platform_only(internal_client) -> None:
    ensure(internal_client, "qq:1001")
    bind(internal_client, "qq:1002", "qq:1001")
    bind(internal_client, "discord:55", "qq:1001")  # the same person on another platform
    store(internal_client, participant("qq:1001"), "Alice 喜欢猫")
    store(internal_client, participant("qq:1002"), "Alice 的小号说她喜欢狗")
    store(internal_client, participant("discord:55"), "Alice 在 discord 上喜欢鸟")
    store(
        internal_client, {"subject_kind": "group_participant", "subject_id": "qq:7788:1002"}, "群里的 Alice"
    )
    store(internal_client, participant("qq:3003"), "别人的事")
    answer = post(
        internal_client, "scoped_forget", {"subject": participant("qq:1001"), "forget_epoch": 1}
    ).json()
    assert answer["status"] == "forgotten" and answer["linked_accounts"] == 1
    assert answer["forgotten_subjects"] == ["participant:qq:1001", "participant:qq:1002"]
    assert answer["facts"] == 2
    left = set(Fact.with_subjects.values_list("subject_key", flat=True))
    assert left == {"participant:discord:55", "group_participant:qq:7788:1002", "participant:qq:3003"}
    # A member subject fans out inside the same group.
    bind(internal_client, "qq:1003", "qq:1001")
    member = {"subject_kind": "group_participant", "subject_id": "qq:7788:1003"}
    fanned = post(internal_client, "scoped_forget", {"subject": member}).json()
    assert "group_participant:qq:7788:1002" in fanned["forgotten_subjects"] and fanned["facts"] == 1
    assert set(Fact.with_subjects.values_list("subject_key", flat=True)) == {
        "participant:discord:55",
        "participant:qq:3003",
    }


def test_forgetting_an_entity_erases_its_memories_everywhere_and_its_ledger(internal_client) -> None:
    ensure(internal_client, "qq:1001")
    bind(internal_client, "discord:55", "qq:1001")
    store(internal_client, participant("qq:1001"), "Alice 喜欢猫")
    post(
        internal_client,
        "scoped_facts",
        {"subject": participant("discord:55"), "facts": [{"text": "鸟"}]},
        name="Rin",
    )
    store(
        internal_client, {"subject_kind": "group_participant", "subject_id": "qq:7788:1001"}, "群里的 Alice"
    )
    store(internal_client, participant("qq:3003"), "别人的事")
    answer = call(internal_client, "identity/entities/forget", {"account_id": "qq:1001"}).json()
    assert answer["status"] == "forgotten" and answer["persisted"] is True
    assert sorted(answer["forgotten_accounts"]) == ["discord:55", "qq:1001"]
    assert answer["facts"] == 3 and answer["characters"] == 2
    assert list(Fact.with_subjects.values_list("subject_key", flat=True)) == ["participant:qq:3003"]
    assert not Account.objects.exists() and not Entity.objects.exists()
