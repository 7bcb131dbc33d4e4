"""Reads for recall: the candidate pools of one character, as plain ``Candidate`` records.

Every pool is one function returning candidates; ``recall_pools`` lists them, so a new layer
(reflections, once they land) joins recall by adding one line there. Persona is never a pool
(it is already in the system prompt, reference §4.1).
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.db.models import F, OuterRef, Q, QuerySet, Subquery

from facts.models import RECALL_POOL, ExtractionCursor, Fact
from nekomem.characters.models import Character
from nekomem.embeddings import VectorSpace, text_fingerprint
from nekomem.language.messages import message_text
from nekomem.pages import pages_read, values_in_pages
from nekomem.statements import (
    SelectColumns,
    column,
    database,
    datetime_param,
    select_columns,
    select_rows,
    table,
)
from recall.engine import Candidate
from recall.models import RawTurnVector
from recall.reflection_pool import reflection_candidates
from recent.models import RawMessage
from reflections.models import RECALL_POOL as REFLECTION_POOL

CHUNK = 5000


def stored_vector(
    *, vector: str, text_sha256: str, model_id: str, text: str, space: VectorSpace | None
) -> np.ndarray | None:
    """The cached vector when both fingerprints match the current text and model (§4.4), else None."""
    if space is None or not vector or model_id != space.model_id:
        return None
    if text_sha256 != text_fingerprint(text):
        return None  # the text was rewritten after the vector was computed
    return decode_vector16(vector, space.dim)


def decode_vector16(stored: str, dim: int) -> np.ndarray | None:
    """Like ``decode_vector`` but kept as float16 (half the memory while a 100k-row index is built)."""
    try:
        raw = base64.b64decode(stored, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) != dim * 2:
        return None
    arr = np.frombuffer(raw, dtype="<f2")
    return arr if np.isfinite(arr).all() else None


def fact_candidates(
    *, character_id: int, space: VectorSpace | None, keys: Collection[int] | None = None
) -> Iterator[Candidate]:
    """Active facts (tier ``fact``, BM25 + cosine) and archived ones (``fact_archive``, BM25 only);
    with ``keys``, only the facts of those primary keys (the rows a memory change names)."""
    # Subjects' rows are in the pool; /query_memory keeps them apart per request (recall.services).
    facts = Fact.with_subjects.filter(character_id=character_id)
    if keys is not None:
        facts = facts.filter(pk__in=list(keys))
    rows = facts.order_by("pk").values_list(
        "pk",
        "fact_id",
        "text",
        "entity",
        "archived",
        "created_at",
        "event_start_at",
        "event_end_at",
        "embedding",
        "embedding_text_sha256",
        "embedding_model_id",
        "extra",
    )
    for pk, fid, text, entity, archived, created, start, end, vec, sha, model, extra in values_in_pages(
        rows, size=CHUNK
    ):
        if not text or not text.strip():
            continue  # hard filter: empty rows (§4.2)
        extra = extra if isinstance(extra, dict) else {}
        yield Candidate(
            id=fid,
            text=text,
            tier="fact_archive" if archived else "fact",
            entity=entity,
            created_at=created,
            event_start_at=start,
            event_end_at=end,
            # Archived facts are not in the cosine pool; skip decoding their vectors.
            vector=None
            if archived
            else stored_vector(vector=vec, text_sha256=sha, model_id=model, text=text, space=space),
            subject_kind=extra.get("subject_kind"),
            subject_id=extra.get("subject_id"),
            scope=extra.get("scope"),
            pool=RECALL_POOL,
            key=pk,
        )


RAW_TURN_POOL = "raw"  # turns of the raw log that fact extraction has not covered yet
RAW_TURN_TIER = "raw_turn"
RAW_TURN_KINDS = ("human", "ai")


class NotRead:
    """``covered`` not read by the caller (None means "extraction has covered nothing")."""


NOT_READ = NotRead()


def _covered_through(character_id: int | OuterRef) -> QuerySet[ExtractionCursor, datetime | None]:
    return ExtractionCursor.objects.filter(character_id=character_id).values_list(
        "last_a_message_at", flat=True
    )


def raw_turns_covered_through(*, character_id: int) -> datetime | None:
    """The raw log's timestamp up to which fact extraction has read the turns (None: nothing yet)."""
    row: Any = _covered_through(character_id).first()
    return row


def _raw_turn_text(message: str) -> tuple[str, str] | None:
    """(kind, text) of a raw-log message that belongs to the pool: a human or AI turn with text."""
    try:
        parsed = json.loads(message)
    except ValueError:
        return None
    if not isinstance(parsed, dict) or parsed.get("type") not in RAW_TURN_KINDS:
        return None
    data = parsed.get("data")
    text = message_text(data.get("content") if isinstance(data, dict) else None)
    return (parsed["type"], text) if text.strip() else None


def _uncovered_turns(*, character_id: int, covered: datetime | None) -> QuerySet[RawMessage]:
    rows = RawMessage.objects.filter(character_id=character_id)
    return rows.filter(timestamp__gt=covered) if covered is not None else rows


def raw_turn_candidates(
    *,
    character_id: int,
    space: VectorSpace | None,
    keys: Collection[int] | None = None,
    after: tuple[datetime, int] | None = None,
    covered: datetime | NotRead | None = NOT_READ,
) -> Iterator[Candidate]:
    """Human and AI turns of the raw log later than what extraction has covered (tier ``raw_turn``, BM25
    and, once the backfill has embedded them, cosine), so recall answers from the first turn, before
    (or without) any LLM; ``after`` = (timestamp, id) of the last row already read. Raw rows of one
    character are written under its lock, so their timestamps grow in commit order and "later than the
    last one read" misses none. With ``keys``, only those turns (a vector the backfill logged)."""
    if isinstance(covered, NotRead):
        covered = raw_turns_covered_through(character_id=character_id)
    if keys is None:
        read = _new_turns_in_pages(character_id=character_id, covered=covered, after=after)
    else:
        rows = _uncovered_turns(character_id=character_id, covered=covered).filter(pk__in=list(keys))
        read = _turns_in_pages(rows.values_list(*_TURN_FIELDS), after=after)
    for pk, message, timestamp, vec, sha, model, start, end in read:
        turn = _raw_turn_text(message)
        if turn is None:
            continue
        kind, text = turn
        yield Candidate(
            id=f"raw_{pk}",
            text=text,
            tier=RAW_TURN_TIER,
            entity="master" if kind == "human" else "neko",
            speaker=kind,
            created_at=timestamp,
            # The time the turn says (``RawTurnVector.event_start_at``), else when it was said.
            event_start_at=start or timestamp,
            event_end_at=end if start else None,
            vector=stored_vector(
                vector=vec or "", text_sha256=sha or "", model_id=model or "", text=text, space=space
            ),
            pool=RAW_TURN_POOL,
            key=pk,
        )


def _turns_in_pages(
    rows: QuerySet[RawMessage, tuple[Any, ...]], *, after: tuple[datetime, int] | None
) -> Iterator[tuple[Any, ...]]:
    """``rows`` (pk, message, timestamp, …) after ``after`` in (timestamp, id) order, in keyset pages of
    plain queries (``nekomem.pages``: the query that reads a turn's new rows is one round trip)."""
    ordered = rows.order_by("timestamp", "pk")
    return values_in_pages(
        _turns_after(ordered, after) if after is not None else ordered,
        size=CHUNK,
        after=lambda _first_page, last: _turns_after(ordered, (last[2], last[0])),
    )


def _turns_after(rows: QuerySet[RawMessage, tuple[Any, ...]], after: tuple[datetime, int]) -> QuerySet:
    # "(timestamp, id) > after", written so that the first condition is a range of the
    # (character, timestamp, id) index: an OR alone made every request scan the uncovered turns.
    return rows.filter(timestamp__gte=after[0]).filter(Q(timestamp__gt=after[0]) | Q(pk__gt=after[1]))


VECTOR_FIELDS = ("embedding", "embedding_text_sha256", "embedding_model_id")
WINDOW_FIELDS = ("event_start_at", "event_end_at")
_TURN_FIELDS = (
    "pk",
    "message",
    "timestamp",
    *(f"recall_vector__{f}" for f in (*VECTOR_FIELDS, *WINDOW_FIELDS)),
)


def _new_turns_in_pages(
    *, character_id: int, covered: datetime | None, after: tuple[datetime, int] | None
) -> Iterator[tuple[Any, ...]]:
    """What ``_turns_in_pages`` gives for ``_uncovered_turns`` (``_TURN_FIELDS``), through SQL built once:
    every query after a chat turn reads that turn here, and the ORM's building and compiling of this
    join cost more than the database's answer."""
    connection = database()

    def page(last: tuple[Any, ...] | None) -> list[tuple[Any, ...]]:
        start = after if last is None else (last[2], last[0])
        sql, columns = _new_turns_read(connection.vendor, covered is not None, start is not None)
        params: list[Any] = [character_id]
        if covered is not None:
            params.append(datetime_param(covered))
        if start is not None:
            at = datetime_param(start[0])
            params += [at, at, start[1]]
        params.append(CHUNK)
        return select_rows(sql, params, columns)

    return pages_read(page, size=CHUNK)


@functools.cache
def _new_turns_read(vendor: str, covered: bool, after: bool) -> tuple[str, SelectColumns]:
    quote = database().ops.quote_name
    raw, vec = quote("r"), quote("v")
    columns = select_columns(
        [
            ("r", RawMessage, "id"),
            ("r", RawMessage, "message"),
            ("r", RawMessage, "timestamp"),
            *(("v", RawTurnVector, name) for name in (*VECTOR_FIELDS, *WINDOW_FIELDS)),
        ]
    )
    timestamp, pk = (
        f"{raw}.{quote(column(RawMessage, 'timestamp'))}",
        f"{raw}.{quote(column(RawMessage, 'id'))}",
    )
    conditions = [f"{raw}.{quote(column(RawMessage, 'character'))} = %s"]
    if covered:
        conditions.append(f"{timestamp} > %s")
    if after:  # as ``_turns_after``: a range of the (character, timestamp, id) index, then the tie
        conditions.append(f"{timestamp} >= %s AND ({timestamp} > %s OR {pk} > %s)")
    sql = (
        f"SELECT {columns.sql} FROM {table(RawMessage)} {raw}"
        f" LEFT JOIN {table(RawTurnVector)} {vec} ON {vec}.{quote(column(RawTurnVector, 'raw'))} = {pk}"
        f" WHERE {' AND '.join(conditions)} ORDER BY {timestamp}, {pk} LIMIT %s"
    )
    return sql, columns


def raw_turns_without_window(*, character_id: int, limit: int) -> list[tuple[int, str, datetime]]:
    """(pk, text, timestamp) of the newest uncovered human and AI turns whose said time was not read
    yet (no ``RawTurnVector`` row: reading it writes one), newest first."""
    covered = raw_turns_covered_through(character_id=character_id)
    rows = (
        _uncovered_turns(character_id=character_id, covered=covered)
        .filter(recall_vector__isnull=True)
        .order_by("-timestamp", "-pk")
        .values_list("pk", "message", "timestamp")[:limit]
    )
    out = []
    for pk, message, timestamp in rows:
        turn = _raw_turn_text(message)
        if turn is not None:
            out.append((pk, turn[1], timestamp))
    return out


def raw_turns_needing_vectors(*, character_id: int, model_id: str, limit: int) -> list[tuple[int, str]]:
    """(pk, text) of uncovered raw-log messages without a vector of ``model_id``, newest first (the turns
    extraction reaches last stay in the pool longest, and recent turns are the likelier answers); the
    text is empty for a message with nothing to embed (the backfill marks it, so it is not read again).
    The SQL test is the model id; a text fingerprint cannot go stale, as raw turns are never edited."""
    covered = raw_turns_covered_through(character_id=character_id)
    rows = (
        _turns_without_vectors(character_id=character_id, covered=covered, model_id=model_id)
        .order_by("-timestamp", "-pk")
        .values_list("pk", "message")[:limit]
    )
    out = []
    for pk, message in rows.iterator(chunk_size=CHUNK):
        turn = _raw_turn_text(message)
        out.append((pk, turn[1] if turn is not None else ""))
    return out


def _turns_without_vectors(
    *, character_id: int, covered: datetime | None, model_id: str
) -> QuerySet[RawMessage]:
    missing = Q(recall_vector__isnull=True) | ~Q(recall_vector__embedding_model_id=model_id)
    return _uncovered_turns(character_id=character_id, covered=covered).filter(missing)


def characters_with_unvectored_turns(*, model_id: str) -> list[int]:
    """Characters with an uncovered raw turn lacking a vector of ``model_id`` (one range probe each)."""
    cursors = dict(ExtractionCursor.objects.values_list("character_id", "last_a_message_at"))
    return [
        character_id
        for character_id in Character.objects.order_by("pk").values_list("pk", flat=True)
        if _turns_without_vectors(
            character_id=character_id, covered=cursors.get(character_id), model_id=model_id
        ).exists()
    ]


def raw_turns_without_vectors(*, character_id: int, model_id: str) -> int:
    """How many uncovered raw-log messages of one character have no vector (nor marker) of ``model_id``."""
    covered = raw_turns_covered_through(character_id=character_id)
    return _turns_without_vectors(character_id=character_id, covered=covered, model_id=model_id).count()


PoolReader = Callable[..., Iterator[Candidate]]
# One line per recallable layer, by the pool name its writes log (``character_memory_changed``).
RECALL_POOLS: dict[str, PoolReader] = {
    RECALL_POOL: fact_candidates,
    RAW_TURN_POOL: raw_turn_candidates,
    REFLECTION_POOL: reflection_candidates,
}


def recall_pools(*, character_id: int, space: VectorSpace | None) -> Iterator[Candidate]:
    """Every pool's candidates, streamed: the index consumes them one by one (no 100k-row list)."""
    for reader in RECALL_POOLS.values():
        yield from reader(character_id=character_id, space=space)


@dataclass(frozen=True)
class RecallCharacter:
    pk: int
    memory_version: int
    stop_names: list[str]
    # Extraction's cursor (``raw_turns_covered_through``), read in the same statement as the version: one
    # round trip fewer a query, and the raw turns it drops are those whose facts that version holds.
    raw_covered: datetime | None
    # How many raw-log rows were ever written for it (``Character.raw_rows_written``): an index that has
    # read as many needs no query for new raw turns.
    raw_written: int


def _recall_character(row: tuple[Any, ...]) -> RecallCharacter:
    pk, name, version, master_name, nicknames, covered, written = row
    # The same list as ``Character.stop_names``.
    names = [name, master_name, *(nicknames if isinstance(nicknames, list) else [])]
    return RecallCharacter(
        pk=pk,
        memory_version=int(version),
        stop_names=[n for n in names if n],
        raw_covered=covered,
        raw_written=int(written),
    )


_RECALL_FIELDS = (
    "pk",
    "name",
    "memory_version",
    "master_name",
    "master_nicknames",
    "raw_covered",
    "raw_rows_written",
)


@dataclass(frozen=True)
class RawLogMarks:
    covered: datetime | None  # extraction's cursor (``raw_turns_covered_through``)
    written: int  # ``Character.raw_rows_written``


_MARK_FIELDS = ("raw_covered", "raw_rows_written")  # the first an annotation (``_recall_characters``)


def raw_log_marks(*, character_id: int) -> RawLogMarks:
    """Extraction's cursor and the raw-log row count, in one statement (for a character that is gone: no
    cursor, no rows)."""
    row = _recall_characters().filter(pk=character_id).values_list(*_MARK_FIELDS).first()
    return RawLogMarks(covered=row[0], written=int(row[1])) if row is not None else RawLogMarks(None, 0)


def _recall_characters() -> QuerySet[Character]:
    return Character.objects.annotate(raw_covered=Subquery(_covered_through(OuterRef("pk"))[:1]))


def recall_character(*, name: str) -> RecallCharacter | None:
    """What a recall request needs of its character, in one indexed query (no model instance).

    Hand-built once (``nekomem.statements``): through the ORM, building and compiling this query cost
    the worker more than the database's answer, on every ``/query_memory``."""
    sql, columns = _recall_character_read(database().vendor)
    rows = select_rows(sql, [name], columns)
    return _recall_character(rows[0]) if rows else None


@functools.cache
def _recall_character_read(vendor: str) -> tuple[str, SelectColumns]:
    """The same columns as ``_RECALL_FIELDS`` through ``_recall_characters`` (the cursor: one row at
    most per character, so a join)."""
    columns = select_columns(
        [
            ("c", Character, "id"),
            ("c", Character, "name"),
            ("c", Character, "memory_version"),
            ("c", Character, "master_name"),
            ("c", Character, "master_nicknames"),
            ("x", ExtractionCursor, "last_a_message_at"),
            ("c", Character, "raw_rows_written"),
        ]
    )
    quote = database().ops.quote_name
    character, cursor = quote("c"), quote("x")
    pk = f"{character}.{quote(column(Character, 'id'))}"
    sql = (
        f"SELECT {columns.sql} FROM {table(Character)} {character}"
        f" LEFT JOIN {table(ExtractionCursor)} {cursor}"
        f" ON {cursor}.{quote(column(ExtractionCursor, 'character'))} = {pk}"
        f" WHERE {character}.{quote(column(Character, 'name'))} = %s"
    )
    return sql, columns


def recent_recall_characters(*, limit: int) -> list[RecallCharacter]:
    """The most recently active characters (never-active ones last), as ``recall_character`` gives them."""
    rows = _recall_characters().order_by(F("last_activity_at").desc(nulls_last=True), "-pk")
    return [_recall_character(row) for row in rows.values_list(*_RECALL_FIELDS)[:limit]]


def recall_characters(*, ids: Collection[int]) -> list[RecallCharacter]:
    """These characters, as ``recall_character`` gives them, in id order."""
    rows = _recall_characters().filter(pk__in=list(ids)).order_by("pk")
    return [_recall_character(row) for row in rows.values_list(*_RECALL_FIELDS)]


def character_memory_version(*, character_id: int) -> int | None:
    """One indexed lookup per request: the version the recall cache compares with."""
    row: Any = Character.objects.filter(pk=character_id).values_list("memory_version", flat=True).first()
    return int(row) if row is not None else None


def character_forgotten_version(*, character_id: int) -> int | None:
    """The ``memory_version`` of the character's last deletion: a saved index older may hold its text."""
    row: Any = Character.objects.filter(pk=character_id).values_list("forgotten_version", flat=True).first()
    return int(row) if row is not None else None


def character_incarnation(*, character_id: int) -> str | None:
    """What tells this character apart from one given the same key in a recreated database."""
    created: Any = Character.objects.filter(pk=character_id).values_list("created_at", flat=True).first()
    return created.isoformat() if created is not None else None
