"""The near-duplicate token index (reference §3.3.4) kept in the database.

Each fact stores its ``fts_tokens`` set (``Fact.dedup_tokens``) with a fingerprint of the stop names it
was computed under (``Fact.dedup_key``), and one ``FactToken`` row per token. A new fact then finds
every existing fact that shares a token with one indexed lookup, instead of re-tokenising the whole
character on every store; the Dice overlap is computed from the shared-token counts and set sizes, so
the scores are exactly those of a full scan.

Rows nobody indexed (replayed events, factories, an edited text, facts imported before a rename) have
an empty ``dedup_key``; a character whose stop names changed has rows under an old key. Both are
re-indexed lazily by ``dedup_index_refresh`` under the character lock before a store reads the index.
Everything lives in the caller's transaction, so a rolled-back store leaves no index rows behind.

A large import leaves its facts unindexed and creates a ``DEDUP_INDEX_JOB`` that indexes them after
the import returns, a batch per transaction (writing the index rows was half of a 100k import). A store
meanwhile indexes whatever the job has not reached yet itself, before it reads the index
(``dedup_index_refresh``): its dedup is exact however far the job got, at the cost of that store
waiting for the rest; the job then finds nothing left. A killed job is claimed again once its lease
runs out and goes on from the rows still unindexed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import timedelta

from django.db import connection, transaction
from django.db.models import Count

from facts.models import Fact, FactToken
from nekomem.characters.locks import lock_character
from nekomem.journal.jobs import job_create, register_job_kind
from nekomem.journal.models import Job
from nekomem.language.normalize import normalize_for_search
from nekomem.language.tokens import fts_tokens

# Bump when fts_tokens changes meaning: every row is then re-indexed lazily.
TOKENIZER_VERSION = "fts1"
MAX_TOKEN_LENGTH = 64
BATCH = 2000
DEDUP_INDEX_JOB = "facts.dedup_index"
# Facts the job indexes per transaction: a store (or a turn, on SQLite any writer) waits at most one
# batch (~0.5 s) for the lock.
JOB_BATCH = 2000


def dedup_key_for(stop_names: Iterable[str]) -> str:
    names = sorted({normalize_for_search(n) for n in stop_names if n})
    material = "\x1f".join([TOKENIZER_VERSION, *names])
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:16]


def token_set(text: str, stop_names: Sequence[str]) -> frozenset[str]:
    return frozenset(fts_tokens(text, stop_names))


def index_key(token: str) -> str:
    """The indexed form of a token: itself, or a digest when it is too long for the column.

    A digest starts with "~", which no token contains (tokens are letter/digit/CJK runs).
    """
    if len(token) <= MAX_TOKEN_LENGTH:
        return token
    return "~" + hashlib.sha256(token.encode("utf-8")).hexdigest()[:40]


def tokens_field(tokens: Iterable[str]) -> str:
    return " ".join(sorted(tokens))


def token_rows(*, character_id: int, fact_pk: int, tokens: frozenset[str]) -> list[tuple[int, int, str, int]]:
    """(character, fact, token key, set size) rows of one fact's index entries."""
    size = len(tokens)
    return [(character_id, fact_pk, index_key(t), size) for t in tokens]


def token_rows_insert(rows: list[tuple[int, int, str, int]]) -> None:
    """Insert index rows without building a model instance per row (the ORM cost ~15 µs a row, which
    dominated importing and backfilling: a fact has ~15 tokens). COPY on PostgreSQL."""
    if not rows:
        return
    table = connection.ops.quote_name(FactToken._meta.db_table)
    columns = "character_id, fact_id, token, size"
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        sql = f"INSERT INTO {table} ({columns}) VALUES (%s, %s, %s, %s)"
        for i in range(0, len(rows), BATCH * 10):
            cursor.executemany(sql, rows[i : i + BATCH * 10])


def facts_tokenize(facts: Iterable[Fact], *, stop_names: Sequence[str]) -> dict[int, frozenset[str]]:
    """Fill ``dedup_tokens``/``dedup_key`` on unsaved or saved facts; returns tokens by object id()."""
    key = dedup_key_for(stop_names)
    out: dict[int, frozenset[str]] = {}
    for fact in facts:
        tokens = token_set(fact.text, stop_names)
        fact.dedup_tokens = tokens_field(tokens)
        fact.dedup_key = key
        out[id(fact)] = tokens
    return out


def facts_index_rows_write(*, character_id: int, facts: Iterable[Fact]) -> int:
    """Insert the index rows of saved facts whose ``dedup_tokens`` is filled; returns rows written."""
    rows: list[tuple[int, int, str, int]] = []
    written = 0
    for fact in facts:
        tokens = frozenset(fact.dedup_tokens.split())
        rows.extend(token_rows(character_id=character_id, fact_pk=fact.pk, tokens=tokens))
        if len(rows) >= BATCH * 50:
            token_rows_insert(rows)
            written += len(rows)
            rows = []
    token_rows_insert(rows)
    return written + len(rows)


def dedup_index_refresh(*, character_id: int, stop_names: Sequence[str], limit: int | None = None) -> int:
    """Index every fact of the character not indexed under its current stop names (at most ``limit``
    of them); returns how many. The caller holds the character's lock.

    Cheap when nothing is stale: two index probes on (character, dedup_key).
    """
    key = dedup_key_for(stop_names)
    mine = Fact.objects.filter(character_id=character_id).order_by()
    # Rows under another non-empty key (the names changed): forget them, then index them again.
    # Two range probes of (character, dedup_key), not "<>", so neither scans the character's facts.
    if any(
        other.values("pk")[:1].exists()
        for other in (mine.filter(dedup_key__gt=key), mine.filter(dedup_key__gt="", dedup_key__lt=key))
    ):
        FactToken.objects.filter(character_id=character_id).delete()
        mine.exclude(dedup_key="").update(dedup_key="", dedup_tokens="")
    unindexed = mine.filter(dedup_key="").order_by()
    stale = list((unindexed if limit is None else unindexed[:limit]).only("pk", "text"))
    if not stale:
        return 0
    # Index rows an edit left behind; a subquery, not an IN list (100k ids exceed PostgreSQL's limit).
    if limit is None:
        FactToken.objects.filter(fact_id__in=unindexed.values("pk")).delete()
    else:
        for i in range(0, len(stale), 900):
            FactToken.objects.filter(fact_id__in=[f.pk for f in stale[i : i + 900]]).delete()
    facts_tokenize(stale, stop_names=stop_names)
    facts_tokens_save(stale)
    facts_index_rows_write(character_id=character_id, facts=stale)
    return len(stale)


def facts_tokens_save(facts: Sequence[Fact]) -> None:
    """Write ``dedup_tokens``/``dedup_key`` of saved facts: one executemany, not bulk_update's CASE
    expressions (which grow quadratically on SQLite: 10k rows took seconds)."""
    table = connection.ops.quote_name(Fact._meta.db_table)
    sql = f"UPDATE {table} SET dedup_tokens = %s, dedup_key = %s WHERE id = %s"
    with connection.cursor() as cursor:
        for i in range(0, len(facts), BATCH):
            cursor.executemany(sql, [(f.dedup_tokens, f.dedup_key, f.pk) for f in facts[i : i + BATCH]])


def fact_index_add(*, fact: Fact, stop_names: Sequence[str]) -> None:
    """Index one saved fact now (a new fact, or one whose text an edit just changed)."""
    tokens = facts_tokenize([fact], stop_names=stop_names)[id(fact)]
    Fact.objects.filter(pk=fact.pk).update(dedup_tokens=fact.dedup_tokens, dedup_key=fact.dedup_key)
    FactToken.objects.filter(fact_id=fact.pk).delete()
    token_rows_insert(token_rows(character_id=fact.character_id, fact_pk=fact.pk, tokens=tokens))


def fact_index_forget(fact: Fact) -> None:
    """Mark an in-memory fact as not indexed (its text is about to change); re-indexed lazily."""
    fact.dedup_tokens = ""
    fact.dedup_key = ""


def shared_token_counts(*, character_id: int, tokens: frozenset[str]) -> list[tuple[int, int, int]]:
    """(fact pk, token-set size, shared tokens) for every fact sharing at least one token.

    One covering-index scan, no join: a token common to most facts makes this the costly part.
    """
    if not tokens:
        return []
    keys = sorted({index_key(t) for t in tokens})
    rows = (
        FactToken.objects.filter(character_id=character_id, token__in=keys)
        .order_by()
        .values_list("fact_id", "size")
        .annotate(shared=Count("id"))
    )
    return list(rows)


# --- the index built after an import -------------------------------------------------------------------


def register_jobs() -> None:
    # A batch takes well under a second; a lease past a whole 100k run on a loaded machine (~1 min).
    register_job_kind(
        DEDUP_INDEX_JOB, handler="facts.services.tokens.dedup_index_job_handle", lease=timedelta(minutes=5)
    )


def dedup_index_defer(*, character_id: int) -> None:
    """In the caller's transaction (an import's): index the character's unindexed facts after it
    commits, in the background."""
    job_create(character_id=character_id, kind=DEDUP_INDEX_JOB)


def dedup_index_job_handle(job: Job) -> str:
    """Index the character's unindexed facts, ``JOB_BATCH`` at a time, each batch in its own
    transaction under the character lock, until none is left."""
    indexed = 0
    while True:
        with transaction.atomic():
            character = lock_character(job.character_id)
            done = dedup_index_refresh(
                character_id=character.pk, stop_names=character.stop_names, limit=JOB_BATCH
            )
        indexed += done
        if done < JOB_BATCH:
            return f"indexed {indexed}"
