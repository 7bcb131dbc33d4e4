"""The maintenance loops' per-tick questions over the facts table are answered from indexes.

With thousands of characters (``bench/many_characters.py``: 10 M facts) each table scan of these
took 5–12 s of the database on every tick, and the warm ``/query_memory`` p95 moved with where the
scans fell. The plans are read on a table shaped like that host's (many open facts with current
vectors and schema, a handful waiting) and freshly analysed: a predicate the partial indexes cannot
answer gets a scan of the table, or of a whole other index, and names neither partial index.
"""

from __future__ import annotations

from typing import Any, cast

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from facts.models import Fact
from nekomem.characters.models import Character
from recall.backfill import characters_needing_vectors, fact_vector_coverage
from reflections.selectors import recheck_characters_in_turn
from reflections.services.recheck import RECHECK_JOB
from tests.characters.factories import CharacterFactory
from tests.facts.factories import make_fact

pytestmark = pytest.mark.django_db

MODEL = "muse-v3-int8/d512/int8/max2000"


def _character(name: str) -> Character:
    return cast(Character, CharacterFactory.create(name=name))


def _vectored(character: Character, **fields: Any) -> Fact:
    return make_fact(character=character, embedding="AAAA", embedding_model_id=MODEL, **fields)


def test_characters_needing_vectors_sees_every_kind_of_missing_vector() -> None:
    """The range form of the model test keeps ``<>``'s meaning: older and newer model ids, and no vector."""
    done = _character("Done")
    _vectored(done)
    make_fact(character=done, archived=True)  # archived: not in the cosine pool
    older, newer, bare = (_character(name) for name in ("Older", "Newer", "Bare"))
    _vectored(older)
    make_fact(character=older, embedding="AAAA", embedding_model_id="minilm-l6-int8/d384")
    make_fact(character=newer, embedding="AAAA", embedding_model_id="zz-model/d512")
    make_fact(character=bare, embedding_model_id=MODEL)  # a model id left behind, no vector

    assert sorted(characters_needing_vectors(model_id=MODEL)) == sorted([older.pk, newer.pk, bare.pk])
    coverage = fact_vector_coverage(MODEL)
    assert (coverage.with_vectors, coverage.without_vectors) == (2, 3)


def _facts_statements(run) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        run()
    return [q["sql"] for q in captured.captured_queries if '"facts_fact"' in q["sql"]]


SETTLED_FACTS = 20_000


def _settled_facts(character: Character) -> None:
    """``SETTLED_FACTS`` open facts with a current vector and schema (copies of one, in one statement),
    then ANALYZE, so that the planner prices the table as it is on a host at rest."""
    template = _vectored(character)
    columns = [f.column for f in Fact._meta.concrete_fields if f.column not in ("id", "fact_id")]
    listed = ", ".join(f'"{c}"' for c in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f'INSERT INTO facts_fact ("fact_id", {listed}) SELECT %s || n, {listed}'
            " FROM facts_fact CROSS JOIN generate_series(1, %s) AS n WHERE id = %s",
            ["settled-", SETTLED_FACTS, template.pk],
        )
        cursor.execute("ANALYZE facts_fact")


def _plan(sql: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}")
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the plans read are PostgreSQL's")
def test_the_backfill_tick_finds_its_characters_without_scanning_the_facts() -> None:
    character = _character("Ann")
    _settled_facts(character)
    make_fact(character=character)
    statements = _facts_statements(lambda: characters_needing_vectors(model_id=MODEL))
    assert statements
    for sql in statements:
        plan = _plan(sql)
        assert "fact_open_vector_model" in plan and "Seq Scan on facts_fact" not in plan, plan


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the plans read are PostgreSQL's")
def test_the_schema_recheck_tick_finds_v1_facts_without_scanning_or_sorting_them() -> None:
    character = _character("Ann")
    make_fact(character=character, schema_version=1)
    _settled_facts(_character("Bea"))

    found: list[list[int]] = []
    statements = _facts_statements(lambda: found.append(recheck_characters_in_turn(job_kind=RECHECK_JOB)))
    assert found == [[character.pk]]
    assert statements
    for sql in statements:
        # The model's ordering (character name, created_at, id) once made the DISTINCT run per fact.
        assert "characters_character" not in sql and "ORDER BY" not in sql, sql
        plan = _plan(sql)
        assert "fact_old_schema" in plan and "Seq Scan on facts_fact" not in plan, plan
