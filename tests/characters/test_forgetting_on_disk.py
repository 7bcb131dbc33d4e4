"""No byte on disk (issue 49): once a deletion over REST answers, neither the SQLite database file nor its
write-ahead log holds the forgotten text, as UTF-8 or as the JSON escapes a journal event stores it in.
PostgreSQL keeps a deleted tuple until VACUUM (README, "Forgetting and history"): there the test shows
the rows and their versions gone."""

from __future__ import annotations

import json
import secrets
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection
from django.test import Client

from facts.models import Fact
from facts.services import FactDraft, facts_persist
from nekomem.characters.services import character_get_or_create
from nekomem.journal.models import Event
from persona.services import persona_entry_create
from recent.models import RawMessage
from tests.recent.test_theater import STORY, capsule_message

pytestmark = pytest.mark.django_db(transaction=True)

CJK = "甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌亥"


def distinctive() -> list[str]:
    """A latin marker and a CJK one, both new to the database."""
    return [f"qx{secrets.token_hex(8)}", "".join(secrets.choice(CJK) for _ in range(12))]


def forms(text: str) -> list[bytes]:
    return [text.encode(), json.dumps(text)[1:-1].encode()]


def database_bytes() -> dict[str, bytes]:
    name = Path(connection.settings_dict["NAME"])
    files = [name, name.with_name(name.name + "-wal")]
    return {path.name: path.read_bytes() for path in files if path.exists()}


def files_holding(texts: list[str]) -> list[tuple[str, str]]:
    return [
        (file, text)
        for file, data in database_bytes().items()
        for text in texts
        for form in forms(text)
        if form in data
    ]


def written_to_both_files() -> None:
    """Copy the WAL into the database file without emptying it: the text is then in both."""
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")


def add_fact(name: str, texts: list[str]) -> str:
    character = character_get_or_create(name=name)
    facts_persist(character_id=character.pk, drafts=[FactDraft(text=f"主人的暗号是 {t}") for t in texts])
    facts = Fact.objects.filter(character=character, text__contains=texts[0])
    return f"/api/v1/characters/{quote(name)}/facts/{facts.get().fact_id}/"


def add_persona(name: str, texts: list[str]) -> str:
    character = character_get_or_create(name=name)
    added = persona_entry_create(character_id=character.pk, entity="master", text=" ".join(texts))
    assert added.entry is not None
    return f"/api/v1/characters/{quote(name)}/persona/entries/{added.entry.entry_id}/"


def forget_subject(client: Client, name: str, texts: list[str]) -> list[tuple[str, dict]]:
    """A group-chat subject's facts, and its ``scoped_forget``."""
    base = f"/internal/memory/{quote(name)}"
    character_get_or_create(name=name)
    subject = {"subject_kind": "group_chat", "subject_id": f"qq:{secrets.randbelow(10**6)}"}
    stored = client.post(
        f"{base}/scoped_facts",
        {"subject": subject, "facts": [{"text": f"群里的暗号是 {text}"} for text in texts]},
        content_type="application/json",
    )
    assert stored.status_code == 200, stored.content
    return [(f"{base}/scoped_forget", {"subject": subject})]


def forget_raw_turn(client: Client, name: str, texts: list[str]) -> tuple[str, dict]:
    """A chat turn in the raw log, and the forgetting of its time range."""
    turn = [{"type": "human", "data": {"content": f"今天的暗号是 {' '.join(texts)}"}}]
    cached = client.post(
        f"/cache/{quote(name)}", {"input_history": json.dumps(turn)}, content_type="application/json"
    )
    assert cached.status_code == 200, cached.content
    when = RawMessage.objects.get(character__name=name, message__contains=texts[0]).timestamp
    window = {
        "start": (when - timedelta(seconds=1)).isoformat(),
        "end": (when + timedelta(seconds=1)).isoformat(),
    }
    return f"/api/v1/characters/{quote(name)}/raw/forget/", window


def forget_theater_story(client: Client, name: str, texts: list[str]) -> tuple[str, dict]:
    """A theater story's capsule, and ``theater/forget`` of the story."""
    message = capsule_message(summary_text=f"In the story, Mel said {' '.join(texts)}.")
    body = {"input_history": json.dumps([message], ensure_ascii=False), "language": "en"}
    cached = client.post(f"/cache/{quote(name)}", body, content_type="application/json")
    assert cached.json() == {"status": "cached", "count": 1}, cached.content
    return f"/internal/memory/{quote(name)}/theater/forget", {"story_id": STORY}


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the files are SQLite's")
@pytest.mark.parametrize(
    "kind", ["fact", "persona", "group_chat_subject", "raw_turn", "theater_story", "character"]
)
def test_a_deleted_text_leaves_no_byte_in_the_database_or_its_wal(kind: str, internal_client) -> None:
    texts = distinctive()
    name = f"字节{secrets.token_hex(3)}"
    deletes: list[tuple[str, dict | None]]
    if kind == "fact":  # a fact a marker
        deletes = [(add_fact(name, [text]), None) for text in texts]
    elif kind == "persona":  # one entry holding both
        deletes = [(add_persona(name, texts), None)]
    elif kind == "raw_turn":
        deletes = [forget_raw_turn(internal_client, name, texts)]
    elif kind == "theater_story":
        deletes = [forget_theater_story(internal_client, name, texts)]
    elif kind == "character":
        add_fact(name, texts[:1])
        add_persona(name, texts)
        deletes = [(f"/api/v1/characters/{quote(name)}/?confirm={quote(name)}", None)]
    else:
        deletes = list(forget_subject(internal_client, name, texts))
    written_to_both_files()
    held = files_holding(texts)
    assert {file for file, _ in held} == set(database_bytes()), held
    assert {text for _, text in held} == set(texts)

    for url, body in deletes:
        if body is None:
            answer = internal_client.delete(url)
        else:
            answer = internal_client.post(url, body, content_type="application/json")
        assert answer.status_code == 200, answer.content

    assert files_holding(texts) == []


def test_a_deleted_text_leaves_no_version_behind() -> None:
    texts = distinctive()
    name = f"版本{secrets.token_hex(3)}"
    urls = [add_fact(name, texts[:1]), add_persona(name, texts)]
    assert any(texts[0] in json.dumps(e, ensure_ascii=False) for e in Event.objects.values_list("payload"))
    for url in urls:
        assert Client().delete(url).status_code == 200
    journal = json.dumps(list(Event.objects.values_list("payload", flat=True)), ensure_ascii=False)
    assert not [text for text in texts if text in journal]
