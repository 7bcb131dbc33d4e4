"""The hand-built reads of every query (recall's character, a character's new raw turns) answer what the
ORM querysets they stand for answer, on each backend the suite runs on: the same rows, in the same
order, with the same converted values (datetimes stored as text on SQLite, JSON)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from facts.models import ExtractionCursor
from recall.selectors import pools, recall_character
from tests.characters.factories import CharacterFactory
from tests.recall.factories import RawTurnVectorFactory
from tests.recent.factories import RawMessageFactory

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 14, 9, 26, 53, 589_793, tzinfo=UTC)
# Seconds after START of each raw row; rows 3 and 4 share a timestamp (the (timestamp, id) tie).
OFFSETS = (0.0, 1.5, 2.25, 3.0, 3.0, 4.125, 7.0)


@pytest.fixture
def raw_log():
    character = CharacterFactory.create(name="Mel")
    rows = [
        RawMessageFactory.create(
            character=character,
            timestamp=START + timedelta(seconds=offset),
            message=json.dumps(
                {"type": "human" if i % 2 else "ai", "data": {"content": f"第{i}句 line {i}"}}
            ),
        )
        for i, offset in enumerate(OFFSETS)
    ]
    RawTurnVectorFactory.create(raw=rows[1])
    # A turn that says when it happened: its window is read with it.
    RawTurnVectorFactory.create(
        raw=rows[4], event_start_at=START - timedelta(days=7), event_end_at=START - timedelta(days=6)
    )
    RawMessageFactory.create(timestamp=START + timedelta(seconds=5))  # another character's: never read
    return character, rows


def orm_read(character_id, covered, after) -> list[tuple]:
    rows = pools._uncovered_turns(character_id=character_id, covered=covered)
    return list(pools._turns_in_pages(rows.values_list(*pools._TURN_FIELDS), after=after))


@pytest.mark.parametrize("chunk", [5000, 2])  # 2: the keyset pages, with a page boundary inside the tie
@pytest.mark.parametrize("after_row", [None, 3, 4, 6])
@pytest.mark.parametrize("covered_row", [None, 2])
def test_new_raw_turns_read_as_the_orm_reads_them(raw_log, monkeypatch, chunk, after_row, covered_row):
    character, rows = raw_log
    monkeypatch.setattr(pools, "CHUNK", chunk)
    covered = rows[covered_row].timestamp if covered_row is not None else None
    after = (rows[after_row].timestamp, rows[after_row].pk) if after_row is not None else None

    read = list(pools._new_turns_in_pages(character_id=character.pk, covered=covered, after=after))

    assert read == orm_read(character.pk, covered, after)
    expected = [
        row.pk
        for row in rows
        if (covered is None or row.timestamp > covered) and (after is None or (row.timestamp, row.pk) > after)
    ]
    assert [pk for pk, *_ in read] == expected
    by_pk = {row.pk: row for row in rows}
    for pk, message, timestamp, embedding, sha, model, start, end in read:
        assert (message, timestamp) == (by_pk[pk].message, by_pk[pk].timestamp)
        assert timestamp.tzinfo is not None
        dated = pk == rows[4].pk
        assert (start, end) == (
            (START - timedelta(days=7), START - timedelta(days=6)) if dated else (None, None)
        )
        vectored = pk in (rows[1].pk, rows[4].pk)
        assert (model == "model-a") is vectored and bool(embedding) is vectored and bool(sha) is vectored


def test_recall_character_reads_what_the_orm_reads() -> None:
    mel = CharacterFactory.create(name="Mel", master_name="Emily", master_nicknames=["Em", "小艾"])
    mel.raw_rows_written, mel.memory_version = 12, 7
    mel.save(update_fields=["raw_rows_written", "memory_version"])
    ExtractionCursor.objects.create(character=mel, last_a_message_at=START)
    CharacterFactory.create(name="Nox", master_nicknames=[])  # no cursor yet

    for name in ("Mel", "Nox"):
        orm = pools._recall_characters().filter(name=name).values_list(*pools._RECALL_FIELDS).first()
        assert orm is not None
        assert recall_character(name=name) == pools._recall_character(orm)

    read = recall_character(name="Mel")
    assert read is not None
    assert (read.pk, read.memory_version, read.raw_written, read.raw_covered) == (mel.pk, 7, 12, START)
    assert read.stop_names == ["Mel", "Emily", "Em", "小艾"]
    nox = recall_character(name="Nox")
    assert nox is not None and nox.raw_covered is None
    assert recall_character(name="nobody") is None
