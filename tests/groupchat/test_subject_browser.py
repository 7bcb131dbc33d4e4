"""Group-chat subjects in the memory browser (issue 34): every layer page filters by subject — the
master's private memory by default, every row, or one subject — rows name their subject, the browser's
edits reach subject rows, and a whole subject is forgotten from any page with the counts shown."""

from __future__ import annotations

import json
import re
from typing import Any, cast

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from facts.models import Fact
from facts.services.scoped import scoped_fact_hash, subject_of_fact
from nekomem.characters.models import Character
from persona.models import PersonaCorrection, PersonaEntry
from reflections.models import Reflection
from tests.characters.factories import CharacterFactory
from tests.groupchat.test_scoped_routes import ALICE, BOB, store
from tests.persona.factories import make_entry
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db
ALICE_KEY = "group_participant:qq:7788:1001"
BOB_KEY = "participant:qq:1002"
PAGES = ("facts", "reflections", "persona")
MASTER_ROW = {
    "facts": "master fact melon",
    "reflections": "master reflection melon",
    "persona": "master persona melon",
}


@pytest.fixture
def mio(internal_client: Client) -> Character:
    character = cast(Character, CharacterFactory(name="Mio", master_name="主人"))
    Fact.objects.create(
        character=character,
        fact_id="fact_20260101000000_aaaaaaaa",
        text="master fact melon",
        hash="aaaaaaaaaaaaaaaa",
        created_at=character.created_at,
    )
    make_reflection(character=character, text="master reflection melon", status="pending")
    make_entry(character=character, section="master", text="master persona melon")
    assert store(internal_client, ALICE, "alice fact melon", display_name="Alice Liddell").status_code == 200
    assert store(internal_client, BOB, "bob fact melon").status_code == 200
    make_reflection(
        character=character,
        text="alice reflection melon",
        status="pending",
        subject_key=ALICE_KEY,
        extra={"subject_kind": ALICE["subject_kind"], "subject_id": ALICE["subject_id"]},
    )
    make_entry(character=character, section=f"@subject/{ALICE_KEY}", text="alice persona melon")
    PersonaCorrection.with_subjects.create(
        character=character,
        old_text="alice persona melon",
        new_text="alice correction melon",
        entity=f"@subject/{ALICE_KEY}",
        created_at=timezone.now(),
        dedup_key="alice-correction",
        extra={"subject_kind": ALICE["subject_kind"], "subject_id": ALICE["subject_id"]},
        subject_key=ALICE_KEY,
    )
    return character


def page(client: Client, layer: str, **params: str) -> str:
    answer = client.get(f"/browse/Mio/{layer}/", params)
    assert answer.status_code == 200
    return answer.content.decode()


def melons(html: str) -> set[str]:
    """The rows' texts on a page (every test text ends in "melon")."""
    return set(re.findall(r"(?:master|alice|bob) (?:fact|reflection|persona|correction) melon", html))


def messages_of(client: Client) -> str:
    return " ".join(str(m) for m in client.get("/browse/Mio/facts/").context["messages"])


@pytest.mark.parametrize("layer", PAGES)
def test_the_private_view_is_the_default_and_shows_no_subject_row(client: Client, mio, layer: str) -> None:
    html = page(client, layer)
    assert melons(html) == {MASTER_ROW[layer]}
    assert 'data-testid="row-subject"' not in html and 'data-testid="subject-panel"' not in html
    # The filter lists every subject, with its kind, id, display name and counts.
    options = re.findall(
        r'<option value="([^"]*)"[^>]*>([^<]*)</option>',
        html.split('name="subject"')[1].split("</select>")[0],
    )
    listed = dict(options)
    assert set(listed) == {"", "*", ALICE_KEY, BOB_KEY}
    alice = listed[ALICE_KEY]
    assert "Alice Liddell" in alice and "group_participant" in alice and "qq:7788:1001" in alice
    assert (
        "facts 1" in alice and "reflections 1" in alice and "persona 1" in alice and "corrections 1" in alice
    )
    assert "facts 1" in listed[BOB_KEY] and "reflections 0" in listed[BOB_KEY]


def test_one_subject_and_all(client: Client, mio) -> None:
    alice_facts = page(client, "facts", subject=ALICE_KEY)
    assert melons(alice_facts) == {"alice fact melon"}
    assert "@ Alice Liddell" in alice_facts and 'data-testid="subject-panel"' in alice_facts
    assert melons(page(client, "facts", subject=BOB_KEY)) == {"bob fact melon"}
    assert melons(page(client, "facts", subject="*")) == {
        "master fact melon",
        "alice fact melon",
        "bob fact melon",
    }
    assert melons(page(client, "reflections", subject=ALICE_KEY)) == {"alice reflection melon"}
    assert melons(page(client, "reflections", subject="*")) == {
        "master reflection melon",
        "alice reflection melon",
    }
    persona = page(client, "persona", subject=ALICE_KEY)
    assert melons(persona) == {"alice persona melon", "alice correction melon"}
    assert "@subject/" + ALICE_KEY in persona
    assert melons(page(client, "persona", subject=BOB_KEY)) == set()


@pytest.mark.parametrize("bad", ["no-colon", "x" * 700 + ":1", "a:\x07"])
def test_a_filter_that_cannot_be_a_subject_shows_the_private_view(client: Client, mio, bad: str) -> None:
    for layer in PAGES:
        assert not {t for t in melons(page(client, layer, subject=bad)) if not t.startswith("master")}


def test_the_browser_edits_and_deletes_subject_rows(client: Client, mio) -> None:
    fact = Fact.with_subjects.get(subject_key=ALICE_KEY)
    back = f"subject={ALICE_KEY}"
    answer = client.post(
        "/browse/Mio/facts/edit/",
        {
            "fact_id": fact.fact_id,
            "text": "alice likes pears",
            "importance": 7,
            "entity": "master",
            "back": back,
        },
    )
    assert answer.status_code == 302 and answer["Location"].endswith(
        f"?subject={ALICE_KEY.replace(':', '%3A')}"
    )
    fact.refresh_from_db()
    assert (fact.text, fact.importance, fact.subject_key) == ("alice likes pears", 7, ALICE_KEY)
    # Its hash stays salted with its subject, as when the scoped route stored it.
    assert fact.hash == scoped_fact_hash(subject=subject_of_fact(fact), text="alice likes pears")
    assert not Fact.objects.filter(text="alice likes pears").exists()
    client.post("/browse/Mio/facts/archive/", {"fact_id": fact.fact_id})
    fact.refresh_from_db()
    assert fact.archived
    client.post("/browse/Mio/facts/delete/", {"fact_id": fact.fact_id})
    assert not Fact.with_subjects.filter(pk=fact.pk).exists()
    assert "已删除 Deleted" in messages_of(client)

    reflection = Reflection.with_subjects.get(subject_key=ALICE_KEY)
    client.post(
        f"/browse/Mio/reflections/{reflection.reflection_id}/edit/", {"text": "alice reflection pear"}
    )
    reflection.refresh_from_db()
    assert reflection.text == "alice reflection pear"
    # Its lifecycle is not the browser's: confirming a subject's reflection is refused and writes nothing.
    client.post(f"/browse/Mio/reflections/{reflection.reflection_id}/confirm/")
    reflection.refresh_from_db()
    assert reflection.status == "pending"
    client.post(f"/browse/Mio/reflections/{reflection.reflection_id}/delete/")
    assert not Reflection.with_subjects.filter(pk=reflection.pk).exists()

    entry = PersonaEntry.with_subjects.get(subject_key=ALICE_KEY)
    client.post(f"/browse/Mio/persona/entries/{entry.entry_id}/edit/", {"text": "alice persona pear"})
    entry.refresh_from_db()
    assert entry.text == "alice persona pear"
    client.post(f"/browse/Mio/persona/entries/{entry.entry_id}/delete/")
    assert not PersonaEntry.with_subjects.filter(pk=entry.pk).exists()
    # The master's memory is untouched.
    assert Fact.objects.get().text == "master fact melon"
    assert PersonaEntry.objects.get().text == "master persona melon"


def test_forgetting_a_subject_from_a_page_shows_the_counts(client: Client, mio) -> None:
    answer = client.post(
        "/browse/Mio/subjects/forget/", {"subject_key": ALICE_KEY, "next": "/browse/Mio/reflections/"}
    )
    assert answer.status_code == 302 and answer["Location"] == "/browse/Mio/reflections/"
    said = " ".join(str(m) for m in client.get(answer["Location"]).context["messages"])
    assert ALICE_KEY in said and "facts 1" in said and "reflections 1" in said and "persona_entries 1" in said
    for model in (Fact, Reflection, PersonaEntry, PersonaCorrection):
        assert not model.with_subjects.filter(subject_key=ALICE_KEY).exists()
    assert Fact.with_subjects.filter(subject_key=BOB_KEY).count() == 1
    assert ALICE_KEY not in page(client, "facts")  # gone from the filter too
    # A key that is no subject changes nothing.
    client.post("/browse/Mio/subjects/forget/", {"subject_key": "master", "next": "/browse/Mio/facts/"})
    assert "not a subject key: 'master'" in messages_of(client)
    assert Fact.with_subjects.filter(subject_key=BOB_KEY).count() == 1


def test_forgetting_needs_a_post_from_the_browser(client: Client, mio) -> None:
    assert client.get("/browse/Mio/subjects/forget/").status_code == 405
    outside = Client(REMOTE_ADDR="203.0.113.9")
    answer: Any = outside.post("/browse/Mio/subjects/forget/", {"subject_key": ALICE_KEY})
    assert answer.status_code == 302 and "login" in answer["Location"]
    assert Fact.with_subjects.filter(subject_key=ALICE_KEY).count() == 1


def test_export_and_import_carry_every_layer_subject_fields(client: Client, mio, tmp_path) -> None:
    """Reference §2.4: the files write ``subject_kind`` / ``subject_id`` / ``scope``; the import reads
    them back to the same subject key, and the browser shows them under that subject only."""
    out = tmp_path / "out"
    call_command("export_memory", str(out), "--character", "Mio")
    files = {
        name: json.loads((out / "Mio" / name).read_text(encoding="utf-8"))
        for name in ("facts.json", "reflections.json", "persona_corrections.json", "persona.json")
    }
    wanted = (ALICE["subject_kind"], ALICE["subject_id"])
    for name in ("facts.json", "reflections.json", "persona_corrections.json"):
        row = next(r for r in files[name] if "alice" in json.dumps(r))
        assert (row["subject_kind"], row["subject_id"]) == wanted, name
        private = [r for r in files[name] if str(r.get("text", r.get("new_text", ""))).startswith("master")]
        assert not [r for r in private if "subject_kind" in r], name
    fact = next(r for r in files["facts.json"] if r["text"] == "alice fact melon")
    assert fact["scope"] == ALICE_KEY
    section = files["persona.json"][f"@subject/{ALICE_KEY}"]
    assert [e["text"] for e in section["facts"]] == ["alice persona melon"]

    (out / "Mio").rename(out / "Rin")
    call_command("import_memory", str(out), "--character", "Rin")
    for model in (Fact, Reflection, PersonaEntry, PersonaCorrection):
        rows = model.with_subjects.filter(character__name="Rin", subject_key=ALICE_KEY)
        assert rows.count() == 1, model.__name__
    assert Fact.with_subjects.filter(character__name="Rin", subject_key=BOB_KEY).count() == 1
    for layer in PAGES:
        shown = client.get(f"/browse/Rin/{layer}/").content.decode()
        assert melons(shown) == {MASTER_ROW[layer]}
        alice = client.get(f"/browse/Rin/{layer}/", {"subject": ALICE_KEY}).content.decode()
        assert melons(alice) and all(t.startswith("alice") for t in melons(alice))
