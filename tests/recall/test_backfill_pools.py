"""The embedding backfill covers every pool in reference §6's order (persona entries, reflections,
facts, raw turns), logs each batch as vector-only changes of its pool, and recall's cosine path then
ranks reflections: filled into the cached index in place, never by a rebuild."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings
from django.utils import timezone

from facts.models import Fact
from nekomem.characters.models import Character, MemoryChange
from nekomem.characters.services import character_memory_changed
from nekomem.embeddings import get_embedder, text_fingerprint
from nekomem.runtime.status import vector_coverage
from persona.models import CHANGE_POOL as PERSONA_POOL
from persona.models import PersonaEntry
from recall import index_cache
from recall.backfill import characters_needing_vectors, embedding_backfill
from recall.services import RecallRequest, recall_query
from recall.tasks import embedding_backfill_tick
from reflections.models import RECALL_POOL as REFLECTION_POOL
from reflections.models import Reflection
from tests.persona.factories import make_entry
from tests.recall.support import fact_entry, import_facts, require_muse
from tests.reflections.factories import make_reflection

NAME = "小雨"
FACTS = ["主人每天早上喝一杯冰美式", "主人周末喜欢去爬山"]
# No word in common with the query "咖啡" below: only the cosine path can find it.
REFLECTION = "主人一天要喝三杯拿铁"


@pytest.fixture
def character(tmp_path: Path, db) -> Character:
    require_muse()
    now = timezone.now()
    import_facts(tmp_path, NAME, [fact_entry(t, now - timedelta(days=i)) for i, t in enumerate(FACTS)])
    return Character.objects.get(name=NAME)


def logged_reflection(character: Character, text: str) -> Reflection:
    """A confirmed reflection, its write logged as the reflections layer's writes are (the factory
    saves the row only)."""
    reflection = make_reflection(character=character, text=text, status=Reflection.Status.CONFIRMED)
    character_memory_changed(character_id=character.pk, pool=REFLECTION_POOL, rows=[reflection.pk])
    return reflection


def vector_changes(character: Character) -> list[tuple[int, str, int | None]]:
    return list(
        MemoryChange.objects.filter(character=character, vector_only=True)
        .order_by("version", "row")
        .values_list("version", "pool", "row")
    )


def test_backfill_embeds_persona_then_reflections_then_facts(character: Character) -> None:
    embedder = get_embedder()
    assert embedder is not None
    entries = [make_entry(character=character, text=t) for t in ("主人是左撇子", "主人怕打雷")]
    reflections = [make_reflection(character=character, text=t) for t in ("主人很恋家", "主人爱喝咖啡")]
    make_reflection(character=character, text="主人讨厌猫", status=Reflection.Status.DENIED)
    assert character.pk in characters_needing_vectors(model_id=embedder.model_id)

    first = embedding_backfill(character_id=character.pk, limit=3, queue_pairs=False)
    # Persona first (both), then one reflection; the limit stops it before any fact.
    assert (first.persona, first.reflections, first.embedded) == (2, 1, 3)
    assert not Fact.objects.filter(character=character).exclude(embedding="").exists()

    second = embedding_backfill(character_id=character.pk, queue_pairs=False)
    assert (second.persona, second.reflections, len(second.fact_pks)) == (0, 1, 2)

    rows: list[PersonaEntry | Reflection] = [
        *PersonaEntry.objects.filter(pk__in=[e.pk for e in entries]),
        *Reflection.objects.filter(pk__in=[r.pk for r in reflections]),
    ]
    for row in rows:
        assert row.embedding_model_id == embedder.model_id
        assert row.embedding_text_sha256 == text_fingerprint(row.text)
        assert row.cached_vector(embedder) is not None
    # A denied reflection is no reader's: never embedded.
    assert Reflection.objects.get(status=Reflection.Status.DENIED).embedding == ""

    changes = vector_changes(character)
    pools_in_order = [pool for _, pool, _ in changes]
    assert pools_in_order == [PERSONA_POOL] * 2 + [REFLECTION_POOL] * 2 + ["fact"] * 2
    assert {row for _, pool, row in changes if pool == PERSONA_POOL} == {e.pk for e in entries}
    assert {row for _, pool, row in changes if pool == REFLECTION_POOL} == {r.pk for r in reflections}
    assert embedding_backfill(character_id=character.pk).embedded == 0  # nothing stale left
    assert character.pk not in characters_needing_vectors(model_id=embedder.model_id)


def test_a_rewritten_reflection_or_entry_is_embedded_again(character: Character) -> None:
    embedder = get_embedder()
    assert embedder is not None
    entry = make_entry(character=character, text="主人是左撇子")
    reflection = make_reflection(character=character, text="主人很恋家")
    embedding_backfill(character_id=character.pk, queue_pairs=False)
    # Another path rewrites the texts without clearing the columns: the fingerprints catch it.
    PersonaEntry.objects.filter(pk=entry.pk).update(text="主人是右撇子")
    Reflection.objects.filter(pk=reflection.pk).update(text="主人很爱旅行")
    entry.refresh_from_db()
    assert entry.cached_vector(embedder) is None
    again = embedding_backfill(character_id=character.pk, queue_pairs=False)
    assert (again.persona, again.reflections, again.embedded) == (1, 1, 2)
    entry.refresh_from_db()
    assert entry.cached_vector(embedder) is not None


def texts_and_paths(query: str) -> list[tuple[str, str, set[str]]]:
    body = recall_query(name=NAME, request=RecallRequest(query=query, explain=True))
    return [(r["text"], r["tier"], set(r["explain"]["paths"])) for r in body["results"]]


def test_reflection_vectors_reach_the_cosine_path_without_a_rebuild(character: Character) -> None:
    make_entry(character=character, text="主人是左撇子")
    reflection = logged_reflection(character, REFLECTION)
    embedding_backfill(character_id=character.pk, queue_pairs=False)  # facts and the entry
    Reflection.objects.filter(pk=reflection.pk).update(embedding="", embedding_model_id="")
    character_memory_changed(character_id=character.pk, pool=REFLECTION_POOL, rows=[reflection.pk])
    # Before its vector: the reflection is in the BM25 pool only (the degraded path, as before).
    before = [paths for text, _, paths in texts_and_paths("拿铁") if text == REFLECTION]
    assert before and "cosine" not in before[0]
    assert all(text != REFLECTION for text, _, _ in texts_and_paths("咖啡"))
    built = index_cache.counters["full_builds"]
    deltas = index_cache.counters["deltas"]

    report = embedding_backfill(character_id=character.pk, queue_pairs=False)
    assert report.reflections == 1 and report.embedded == 1

    found = texts_and_paths("咖啡")
    hit = [(tier, paths) for text, tier, paths in found if text == REFLECTION]
    # Found by its vector: the query's own words are not in it (the feedback terms of the rows found
    # may be, a second lexical pass).
    assert hit and hit[0][0] == "reflection" and "cosine" in hit[0][1], found
    assert not hit[0][1] & {"bm25:words", "bm25:original"}, found
    assert index_cache.counters["full_builds"] == built  # filled in place
    assert index_cache.counters["deltas"] == deltas + 1


def test_persona_vectors_never_make_recall_rebuild(character: Character) -> None:
    texts_and_paths("冰美式")
    built = index_cache.counters["full_builds"]
    make_entry(character=character, text="主人是左撇子")  # the factory saves without logging a change
    report = embedding_backfill(character_id=character.pk, queue_pairs=False)
    assert report.persona == 1
    texts_and_paths("冰美式")
    assert index_cache.counters["full_builds"] == built


def test_without_vectors_reflections_stay_on_bm25(character: Character) -> None:
    logged_reflection(character, REFLECTION)
    with override_settings(EMBEDDINGS_ENABLED=False):
        assert embedding_backfill(character_id=character.pk).embedded == 0
        found = texts_and_paths("拿铁")
    assert any(
        text == REFLECTION and tier == "reflection" and "cosine" not in paths for text, tier, paths in found
    )


def test_the_tick_embeds_a_character_whose_facts_are_all_in(character: Character) -> None:
    embedding_backfill(character_id=character.pk, queue_pairs=False)  # the facts
    reflection = logged_reflection(character, REFLECTION)
    assert embedding_backfill_tick() == 1
    reflection.refresh_from_db()
    assert reflection.cached_vector(get_embedder()) is not None


def test_the_status_counts_persona_and_reflection_vectors(character: Character) -> None:
    embedder = get_embedder()
    assert embedder is not None
    make_entry(character=character, text="主人是左撇子")
    logged_reflection(character, REFLECTION)
    make_reflection(character=character, text="主人讨厌猫", status=Reflection.Status.DENIED)  # not counted
    before = vector_coverage(embedder.model_id)
    assert before.without_vectors == 2 + len(FACTS)
    embedding_backfill(character_id=character.pk, queue_pairs=False)
    after = vector_coverage(embedder.model_id)
    assert (after.with_vectors - before.with_vectors, after.without_vectors) == (2 + len(FACTS), 0)
