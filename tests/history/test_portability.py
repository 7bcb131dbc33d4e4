"""history.ndjson (history/portability.py): read for what this server knows of it, and a deleted row's
versions come back from an export into another database under one primary key a restore can use."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from facts.models import Fact
from facts.services import dedup_pair_queue, dedup_pairs_arbitrate, fact_update
from history.portability import read_history
from history.selectors import row_versions
from history.services import memory_rollback, row_restore
from nekomem.characters.models import Character
from nekomem.characters.services import character_delete, character_get_or_create
from nekomem.journal.causes import change_cause
from nekomem.portability import MalformedFile, memory_export
from recent.compression import window_compress
from recent.services import recent_messages_append
from recent.services.history import MEMO_ROW, memo_text
from tests.history.support import fact_by_text, facts_added, moment
from tests.recent.scripting import summary
from tests.support.dataset import english_messages
from tests.support.llm_server import json_content

pytestmark = pytest.mark.django_db


def write_ndjson(path: Path, lines: list[dict]) -> None:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")


def test_a_history_line_a_newer_server_wrote_is_read_for_what_this_one_knows(tmp_path: Path):
    path = tmp_path / "history.ndjson"
    event_id = str(uuid.uuid4())
    write_ndjson(path, [{"event_id": event_id, "seed": True, "a_field_from_later": 1}])
    [line] = read_history(path)
    assert (str(line.event_id), line.fields) == (event_id, {"seed": True})
    write_ndjson(path, [{"event_id": event_id, "seed": "sometimes"}])
    with pytest.raises(MalformedFile, match="line 1"):
        read_history(path)


def test_a_row_deleted_before_an_export_comes_back_from_its_versions_after_an_import(
    tmp_path: Path, llm_server
):
    name = "删过"
    character = character_get_or_create(name=name)
    facts_added(character.pk, "阿凛喜欢第0本书", "阿凛很喜欢第0本书")
    old, new = (fact_by_text(character.pk, text) for text in ("阿凛喜欢第0本书", "阿凛很喜欢第0本书"))
    with change_cause("edit"):
        fact_update(character_id=character.pk, fact_id=new.fact_id, importance=8)
    dedup_pair_queue(character_id=character.pk, candidate=new, existing=old, cosine=None)
    llm_server.script(json_content([{"index": 0, "action": "merge", "text": "阿凛非常喜欢第0本书"}]))
    assert dedup_pairs_arbitrate(character_id=character.pk, now=timezone.now()).resolved == 1
    assert not Fact.with_subjects.filter(fact_id=new.fact_id).exists()  # the merge deleted the candidate
    before = row_versions(character_id=character.pk, layer="facts", row_id=new.fact_id)
    assert [(v.cause, v.fields is None) for v in before] == [
        ("import", False),
        ("edit", False),
        ("dedup", True),
    ]

    memory_export(character=character, folder=tmp_path / "out" / name)
    character_delete(name=name)
    facts_added(character_get_or_create(name="别人").pk, "别人的事")  # rows that take new keys meanwhile
    call_command("import_memory", str(tmp_path / "out"), verbosity=0)
    back = Character.objects.get(name=name)
    versions = row_versions(character_id=back.pk, layer="facts", row_id=new.fact_id)
    assert [(v.cause, v.fields) for v in versions] == [(v.cause, v.fields) for v in before]
    # One key for all of them, held by no row here.
    [pk] = {v.pk for v in versions}
    assert pk is not None and not Fact.with_subjects.filter(pk=pk).exists()

    row_restore(character_id=back.pk, layer="facts", row_id=new.fact_id, version=2)
    restored = Fact.with_subjects.get(character=back, fact_id=new.fact_id)
    assert (restored.pk, restored.text, restored.importance) == (pk, "阿凛很喜欢第0本书", 8)
    assert row_versions(character_id=back.pk, layer="facts", row_id=new.fact_id)[-1].pk == pk
    # The table's sequence never hands the key out again, and a second import keeps it.
    facts_added(back.pk, "阿凛养了一只猫")
    assert fact_by_text(back.pk, "阿凛养了一只猫").pk > pk
    call_command("import_memory", str(tmp_path / "out"), verbosity=0)
    assert {v.pk for v in row_versions(character_id=back.pk, layer="facts", row_id=new.fact_id)} == {pk}


def _memo_compressed(character: Character, llm_server, *summaries: str) -> None:
    for text in summaries:
        with transaction.atomic():
            recent_messages_append(character_id=character.pk, messages=english_messages(21))
        llm_server.script(summary(text))
        assert window_compress(character_id=character.pk).outcome == "spliced"


@pytest.mark.parametrize("memo_at_export", [True, False], ids=["memo kept", "memo rolled back"])
def test_the_memos_versions_keep_their_key_through_an_export_and_an_import(
    tmp_path: Path, llm_server, memo_at_export: bool
):
    """The memo is the character's own row (its key is the character's): after an import into another
    database its versions name the character the import made, whether or not the window held a memo
    when it was exported, and a restore puts it back."""
    name = "备忘"
    character = character_get_or_create(name=name)
    before_any = moment()
    _memo_compressed(character, llm_server, "They met.", "They met and talked about cats.")
    if not memo_at_export:
        memory_rollback(character_id=character.pk, at=before_any)
        assert memo_text(character.pk) is None
    before = row_versions(character_id=character.pk, layer="recent_memo", row_id=MEMO_ROW)
    assert {v.pk for v in before} == {character.pk}

    memory_export(character=character, folder=tmp_path / "out" / name)
    character_delete(name=name)
    character_get_or_create(name="别人")  # the imported character does not get the old key back
    call_command("import_memory", str(tmp_path / "out"), verbosity=0)
    back = Character.objects.get(name=name)
    assert back.pk != character.pk

    versions = row_versions(character_id=back.pk, layer="recent_memo", row_id=MEMO_ROW)
    assert [(v.cause, v.fields) for v in versions][: len(before)] == [(v.cause, v.fields) for v in before]
    assert {v.pk for v in versions} == {back.pk}
    row_restore(character_id=back.pk, layer="recent_memo", row_id=MEMO_ROW, version=1, force=True)
    restored = memo_text(back.pk)
    assert before[0].fields is not None and restored == before[0].fields["text"]
