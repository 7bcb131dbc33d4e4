"""Subjects are part of every layer's rows (reference §1.6, §2.4, §2.10): a third party's memories never
reach the master's sections, /new_dialog, /get_persona or an unscoped recall, and export/import carry them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
from django.core.management import call_command

from facts.models import Fact
from nekomem.characters.models import Character
from persona.models import PersonaEntry, PersonaSection
from reflections.models import Reflection
from tests.characters.factories import CharacterFactory
from tests.groupchat.test_scoped_routes import ALICE, BOB, post, store
from tests.persona.factories import make_entry
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db
ALICE_KEY = "group_participant:qq:7788:1001"


def recall(client: Any, body: dict[str, Any], name: str = "Mio") -> list[str]:
    answer = client.post(f"/query_memory/{name}", data=json.dumps(body), content_type="application/json")
    assert answer.status_code == 200, answer.content
    return [row["text"] for row in answer.json()["results"]]


@pytest.fixture
def mio(internal_client) -> Any:
    character = cast(Character, CharacterFactory(name="Mio", master_name="主人"))
    make_entry(character=character, section="master", text="master private strawberry cake")
    make_reflection(character=character, text="master reflection strawberry", status="confirmed")
    Fact.objects.create(
        character=character,
        fact_id="fact_20260101000000_aaaaaaaa",
        text="master fact strawberry cake",
        hash="aaaaaaaaaaaaaaaa",
        created_at=character.created_at,
    )
    store(internal_client, ALICE, "alice secret strawberry cake", display_name="Alice")
    store(internal_client, BOB, "bob secret strawberry cake")
    make_entry(character=character, section=f"@subject/{ALICE_KEY}", text="alice persona strawberry")
    make_reflection(
        character=character,
        text="alice reflection strawberry",
        status="confirmed",
        subject_key=ALICE_KEY,
        extra={"subject_kind": ALICE["subject_kind"], "subject_id": ALICE["subject_id"]},
    )
    return character


def test_new_dialog_and_get_persona_hold_only_the_master_memory(client, mio) -> None:
    dialog = client.get("/new_dialog/Mio").content.decode()
    assert "master private strawberry cake" in dialog
    assert "alice" not in dialog and "bob" not in dialog and "@subject" not in dialog
    persona = client.get("/get_persona/Mio").json()
    assert not [key for key in persona if key.startswith("@")]
    assert "alice" not in json.dumps(persona)


def test_unscoped_recall_never_returns_a_subject_row(client, mio) -> None:
    texts = recall(client, {"query": "strawberry cake"})
    assert "master fact strawberry cake" in texts
    assert not [t for t in texts if "alice" in t or "bob" in t]


def test_scoped_recall_returns_only_those_subjects(client, mio) -> None:
    by_key = recall(client, {"query": "strawberry cake", "subjects": [ALICE_KEY]})
    assert "alice secret strawberry cake" in by_key
    assert not [t for t in by_key if "master" in t or "bob" in t]
    by_object = recall(client, {"query": "strawberry cake", "subjects": [BOB]})
    assert by_object == ["bob secret strawberry cake"]
    assert (
        client.post(
            "/query_memory/Mio",
            data=json.dumps({"query": "x", "subjects": [BOB] * 9}),
            content_type="application/json",
        ).status_code
        == 422
    )


def test_default_managers_are_the_private_memory(mio) -> None:
    assert set(Fact.objects.values_list("text", flat=True)) == {"master fact strawberry cake"}
    assert not PersonaEntry.objects.filter(text__contains="alice").exists()
    assert not PersonaSection.objects.filter(key__startswith="@").exists()
    assert not Reflection.objects.filter(text__contains="alice").exists()
    assert Fact.with_subjects.filter(subject_key=ALICE_KEY).count() == 1


def test_export_and_import_carry_subjects(internal_client, mio, tmp_path: Path) -> None:
    out = tmp_path / "out"
    call_command("export_memory", str(out), "--character", "Mio")
    facts = json.loads((out / "Mio" / "facts.json").read_text(encoding="utf-8"))
    alice = next(f for f in facts if f["text"] == "alice secret strawberry cake")
    assert (alice["subject_kind"], alice["subject_id"], alice["scope"]) == (
        ALICE["subject_kind"],
        ALICE["subject_id"],
        ALICE_KEY,
    )
    persona = json.loads((out / "Mio" / "persona.json").read_text(encoding="utf-8"))
    section = persona[f"@subject/{ALICE_KEY}"]
    assert section["display_name"] == "Alice" and section["facts"][0]["text"] == "alice persona strawberry"
    reflections = json.loads((out / "Mio" / "reflections.json").read_text(encoding="utf-8"))
    assert "alice reflection strawberry" in [r["text"] for r in reflections]

    (out / "Mio").rename(out / "Rin")
    call_command("import_memory", str(out), "--character", "Rin")
    assert Fact.with_subjects.filter(character__name="Rin", subject_key=ALICE_KEY).count() == 1
    assert Reflection.with_subjects.filter(character__name="Rin", subject_key=ALICE_KEY).count() == 1
    assert PersonaEntry.with_subjects.filter(character__name="Rin", subject_key=ALICE_KEY).count() == 1
    assert set(Fact.objects.filter(character__name="Rin").values_list("text", flat=True)) == {
        "master fact strawberry cake"
    }
    dialog = internal_client.get("/new_dialog/Rin").content.decode()
    assert "alice" not in dialog and "master private strawberry cake" in dialog
    text = post(internal_client, "scoped_context", {"subjects": [ALICE]}, name="Rin").content.decode()
    assert "alice persona strawberry" in text


def test_a_busy_group_never_crowds_the_master_out_of_recall(client, internal_client) -> None:
    character = cast(Character, CharacterFactory(name="Mio"))
    Fact.objects.bulk_create(
        Fact(
            character=character,
            fact_id=f"fact_20260101000000_{n:08x}",
            text=text,
            hash=f"{n:016x}",
            created_at=character.created_at,
        )
        for n, text in enumerate(
            ["the master bakes lemon cake on sundays", *(f"unrelated private note {n}" for n in range(100))]
        )
    )
    many = [f"lemon cake lemon cake number {n}" for n in range(32)]
    store(internal_client, BOB, *many)
    texts = recall(client, {"query": "lemon cake"})
    assert texts == ["the master bakes lemon cake on sundays"]
    assert len(recall(client, {"query": "lemon cake", "subjects": [BOB]})) > 1
