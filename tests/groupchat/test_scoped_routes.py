"""The group-chat ("scoped") routes (reference §1.6), as the QQ plugin's wire client calls them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from facts.models import Fact
from persona.models import PersonaEntry, PersonaSection
from reflections.models import Reflection
from tests.characters.factories import CharacterFactory
from tests.persona.factories import make_entry
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db

GROUP: dict[str, str] = {"subject_kind": "group_chat", "subject_id": "qq:7788"}
ALICE: dict[str, str] = {"subject_kind": "group_participant", "subject_id": "qq:7788:1001"}
BOB: dict[str, str] = {"subject_kind": "participant", "subject_id": "qq:1002"}


def post(client: Any, route: str, body: dict[str, Any], name: str = "Mio") -> Any:
    return client.post(
        f"/internal/memory/{name}/{route}",
        data=json.dumps(body, ensure_ascii=False),
        content_type="application/json",
    )


def store(client: Any, subject: dict[str, str], *texts: str, **more: Any) -> Any:
    return post(client, "scoped_facts", {"subject": subject, "facts": [{"text": t} for t in texts], **more})


def test_scoped_facts_stores_under_the_subject_and_never_in_private_memory(internal_client) -> None:
    answer = store(internal_client, ALICE, "  Alice 喜欢猫  ", "Alice works nights", display_name="Alice")
    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "stored" and body["created"] == 2 and len(body["fact_ids"]) == 2
    assert body["subject"] == {**ALICE, "scope": "group_participant:qq:7788:1001"}
    assert not Fact.objects.exists()  # the default manager is the master's memory
    rows = Fact.with_subjects.order_by("pk")
    assert [f.text for f in rows] == ["Alice 喜欢猫", "Alice works nights"]
    assert {f.subject_key for f in rows} == {"group_participant:qq:7788:1001"}
    again = store(internal_client, ALICE, "Alice 喜欢猫").json()
    assert again["created"] == 0 and again["fact_ids"] == body["fact_ids"][:1]
    # The same sentence about someone else is a fact of theirs.
    assert store(internal_client, BOB, "Alice 喜欢猫").json()["created"] == 1


@pytest.mark.parametrize(
    "body",
    [
        {"subject": ALICE, "facts": []},
        {"subject": ALICE, "facts": [{"text": "x"}] * 33},
        {"subject": ALICE, "facts": [{"text": "   "}]},
        {"subject": ALICE, "facts": [{"text": "x" * 2001}]},
        {"subject": ALICE, "facts": [{"text": "x", "importance": 11}]},
        {"subject": ALICE, "facts": [{"text": "x", "source": "rumour"}]},
        {"subject": ALICE, "facts": [{"text": "x"}], "display_name": "n" * 65},
        {"subject": {"subject_kind": "stranger", "subject_id": "qq:1"}, "facts": [{"text": "x"}]},
        {"subject": {"subject_kind": "participant", "subject_id": " "}, "facts": [{"text": "x"}]},
        {"subject": {"subject_kind": "participant", "subject_id": "qq:\x07"}, "facts": [{"text": "x"}]},
        {"subject": BOB | {"scope": "legacy_private"}, "facts": [{"text": "x"}]},
        {"facts": [{"text": "x"}]},
    ],
)
def test_scoped_facts_refuses_bad_requests_with_422_detail(internal_client, body) -> None:
    answer = post(internal_client, "scoped_facts", body)
    assert answer.status_code == 422
    assert set(answer.json()) == {"detail"}
    assert not Fact.with_subjects.exists()


def test_scoped_routes_need_the_shared_secret(client) -> None:
    assert store(client, ALICE, "x").status_code in (401, 403)


def test_scoped_context_renders_exactly_the_subjects_in_their_order(internal_client) -> None:
    mio = CharacterFactory(name="Mio", language="en")
    make_entry(character=mio, section="master", text="主人的秘密爱好")
    make_entry(character=mio, section="@subject/group_chat:qq:7788", text="The group plays Go on Fridays")
    make_entry(character=mio, section="@subject/group_participant:qq:7788:1001", text="Alice hosts the games")
    make_reflection(
        character=mio, text="Bob seems shy", status="confirmed", subject_key="participant:qq:1002"
    )
    make_entry(character=mio, section="@subject/participant:qq:9", text="Another person's secret")
    store(internal_client, ALICE, "ignored fact", display_name="Alice")

    text = post(internal_client, "scoped_context", {"subjects": [ALICE, GROUP, BOB]}).content.decode()
    assert "Alice hosts the games" in text and "The group plays Go" in text and "Bob seems shy" in text
    assert text.index("Alice hosts") < text.index("The group plays") < text.index("Bob seems shy")
    assert "About Alice" in text  # the display name heads the section
    for leak in ("主人的秘密爱好", "Another person's secret", "ignored fact"):
        assert leak not in text  # never the master's, another subject's, nor facts

    answer = post(internal_client, "scoped_context", {"subjects": [BOB], "language": "zh"})
    assert answer["Content-Type"].startswith("text/plain") and "Bob seems shy" in answer.content.decode()
    assert post(internal_client, "scoped_context", {"subjects": []}).status_code == 422
    assert post(internal_client, "scoped_context", {"subjects": [BOB] * 9}).status_code == 422
    assert post(internal_client, "scoped_context", {"subjects": [BOB]}, name="nobody").content == b""


def test_scoped_context_spends_the_budget_in_the_order_of_subjects(internal_client) -> None:
    mio = CharacterFactory(name="Mio")
    for n in range(3):  # about 700 tokens each: together more than the whole budget
        make_entry(character=mio, section="@subject/group_chat:qq:7788", text=f"group history {n} " * 230)
    make_entry(character=mio, section="@subject/participant:qq:1002", text="Bob likes tea")
    first = post(internal_client, "scoped_context", {"subjects": [BOB, GROUP]}).content.decode()
    assert "Bob likes tea" in first
    second = post(internal_client, "scoped_context", {"subjects": [GROUP, BOB]}).content.decode()
    assert "Bob likes tea" not in second  # the group came first and took the budget


def test_scoped_mentions_count_only_the_named_subjects(internal_client) -> None:
    mio = CharacterFactory(name="Mio")
    mine = make_entry(character=mio, section="master", text="主人喜欢草莓蛋糕")
    bob = make_entry(character=mio, section="@subject/participant:qq:1002", text="Bob 喜欢草莓蛋糕")
    body = {"response_text": "要不要一起吃草莓蛋糕？", "subjects": [BOB]}
    assert post(internal_client, "scoped_mentions", body).json() == {"status": "recorded"}
    bob.refresh_from_db()
    mine = PersonaEntry.objects.get(pk=mine.pk)
    assert len(bob.recent_mentions) == 1 and mine.recent_mentions == []
    blank = post(internal_client, "scoped_mentions", {"response_text": "  ", "subjects": [BOB]})
    assert blank.json() == {"status": "skipped"}
    assert post(internal_client, "scoped_mentions", {"response_text": "x", "subjects": []}).status_code == 422


def test_scoped_forget_erases_the_subject_everywhere_and_is_idempotent(internal_client) -> None:
    store(internal_client, ALICE, "Alice 喜欢猫", display_name="Alice", language="ja")
    store(internal_client, BOB, "Bob likes tea")
    mio = CharacterFactory._meta.model.objects.get(name="Mio")
    make_entry(character=mio, section="@subject/group_participant:qq:7788:1001", text="Alice hosts")
    make_reflection(character=mio, text="Alice is kind", subject_key="group_participant:qq:7788:1001")
    Fact.with_subjects.filter(text="Alice 喜欢猫").update(archived=True)

    answer = post(internal_client, "scoped_forget", {"subject": ALICE}).json()
    assert answer["status"] == "forgotten" and answer["forgotten_subjects"] == [
        "group_participant:qq:7788:1001"
    ]
    assert (answer["archived_facts"], answer["reflections"], answer["persona_entries"]) == (1, 1, 1)
    assert answer["persona_sections"] == 1 and answer["prompt_locale"] == 1
    assert not Fact.with_subjects.filter(subject_key="group_participant:qq:7788:1001").exists()
    assert not Reflection.with_subjects.filter(subject_key__startswith="group_participant").exists()
    assert not PersonaSection.with_subjects.filter(key__contains="7788:1001").exists()
    assert Fact.with_subjects.filter(text="Bob likes tea").exists()  # nobody else's

    repeat = post(internal_client, "scoped_forget", {"subject": ALICE})
    assert repeat.status_code == 200 and repeat.json()["archived_facts"] == 0


def test_forget_epochs_are_tombstones_that_only_rise(internal_client) -> None:
    store(internal_client, BOB, "Bob likes tea")
    first = post(internal_client, "scoped_forget", {"subject": BOB, "forget_epoch": 3}).json()
    assert first["facts"] == 1 and "duplicate" not in first
    store(internal_client, BOB, "Bob likes coffee")
    repeat = post(internal_client, "scoped_forget", {"subject": BOB, "forget_epoch": 3}).json()
    assert repeat["duplicate"] is True and "facts" not in repeat
    assert Fact.with_subjects.filter(text="Bob likes coffee").exists()  # a repeated epoch touches nothing
    assert post(internal_client, "scoped_forget", {"subject": BOB, "forget_epoch": 4}).json()["facts"] == 1

    url = "/internal/memory/Mio/forget_epochs"
    read = internal_client.get(url, {"subject": ["participant:qq:1002", "participant:qq:404"]})
    assert read.json() == {"epochs": {"participant:qq:1002": 4}}
    assert internal_client.get(url, {"subject": ["k"] * 65}).status_code == 422
    assert internal_client.get(url, {"subject": [""]}).status_code == 422
    scoped = {"subject": {**BOB, "scope": "custom"}, "forget_epoch": 1}
    assert post(internal_client, "scoped_forget", scoped).status_code == 422
    assert post(internal_client, "scoped_forget", {"subject": BOB, "forget_epoch": -1}).status_code == 422


def test_scoped_subjects_lists_one_platform_sorted(internal_client) -> None:
    store(internal_client, BOB, "Bob likes tea", language="en")
    store(internal_client, ALICE, "Alice 喜欢猫", display_name="Alice")
    store(internal_client, {"subject_kind": "participant", "subject_id": "tg:55"}, "elsewhere")
    url = "/internal/memory/Mio/scoped_subjects"
    rows = internal_client.get(url, {"platform": "qq"}).json()["subjects"]
    assert [(r["subject_kind"], r["subject_id"]) for r in rows] == [
        ("group_participant", "qq:7788:1001"),
        ("participant", "qq:1002"),
    ]
    alice, bob = rows
    assert alice["display_name"] == "Alice" and alice["persona"] is True and alice["facts"] == 1
    assert bob["prompt_locale"] is True and bob["archived"] is False and bob["last_write_at"]
    assert internal_client.get(url, {"platform": "qq:1"}).status_code == 422
    assert internal_client.get(url).status_code == 422
    assert internal_client.get("/internal/memory/nobody/scoped_subjects", {"platform": "qq"}).json() == {
        "subjects": []
    }
