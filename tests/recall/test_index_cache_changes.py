"""The per-process index takes each memory change as the rows it touched: no rebuild for a new fact, an
edit, a delete, a backfill batch or a persona write; a rebuild only for a change without detail (an
import)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.db import transaction
from django.utils import timezone

from facts.models import Fact
from facts.services import FactDraft, fact_delete, fact_update, facts_persist
from nekomem.characters.models import Character, MemoryChange
from nekomem.characters.selectors import memory_changes_since
from nekomem.characters.services import character_get_or_create, character_memory_changed
from persona.services import persona_entry_create, persona_mentions_record, suppressions_refresh
from recall import index_cache
from recall.backfill import embedding_backfill
from recall.services import RecallRequest, recall_query
from reflections.evidence import Signal
from reflections.models import Reflection
from reflections.services import reflection_edit
from reflections.services.lifecycle import reflection_signal_apply
from tests.recall.support import fact_entry, import_facts, require_muse
from tests.reflections.factories import make_reflection

NAME = "小雨"
TEXTS = ["主人养了一只橘猫，名字叫团子", "主人每天早上喝一杯冰美式", "主人周末喜欢去爬山"]


@pytest.fixture
def character(tmp_path: Path, db) -> Character:
    now = timezone.now()
    import_facts(tmp_path, NAME, [fact_entry(t, now - timedelta(days=i)) for i, t in enumerate(TEXTS)])
    return Character.objects.get(name=NAME)


def texts(query: str) -> list[str]:
    return [row["text"] for row in recall_query(name=NAME, request=RecallRequest(query=query))["results"]]


def builds() -> int:
    return index_cache.counters["full_builds"]


def draft(text: str) -> FactDraft:
    return FactDraft(text=text)


def test_add_edit_delete_reach_the_index_without_a_rebuild(character: Character) -> None:
    assert texts("橘猫团子")[0] == TEXTS[0]
    built = builds()
    deltas = index_cache.counters["deltas"]

    facts_persist(character_id=character.pk, drafts=[draft("主人最近在学弹吉他")])
    assert texts("吉他")[0] == "主人最近在学弹吉他"

    fact = Fact.objects.get(character=character, text=TEXTS[0])
    fact_update(character_id=character.pk, fact_id=fact.fact_id, text="主人养了一只柴犬，名字叫豆豆")
    assert texts("柴犬豆豆")[0] == "主人养了一只柴犬，名字叫豆豆"
    assert TEXTS[0] not in texts("橘猫团子")

    gone = Fact.objects.get(character=character, text=TEXTS[2])
    assert fact_delete(character_id=character.pk, fact_id=gone.fact_id)
    assert TEXTS[2] not in texts("爬山")

    assert builds() == built  # every change came as rows
    assert index_cache.counters["deltas"] == deltas + 3
    body = recall_query(name=NAME, request=RecallRequest(query="吉他", explain=True))
    assert body["index"]["full_builds"] == built and body["index"]["delta_rows"] >= 3


def test_backfill_batches_fill_vectors_without_a_rebuild(character: Character) -> None:
    require_muse()
    assert texts("冰美式")[0] == TEXTS[1]  # built before any vector exists
    built = builds()
    assert embedding_backfill(character_id=character.pk, batch=1, queue_pairs=False).embedded == 3
    # A paraphrase with no shared word: only the vector path, filled by the batches, can find it.
    found = recall_query(name=NAME, request=RecallRequest(query="咖啡", explain=True))["results"]
    assert found and found[0]["text"] == TEXTS[1] and "cosine" in found[0]["explain"]["paths"]
    assert builds() == built


def test_a_row_logged_again_with_its_vector_is_kept_and_still_found_by_cosine(character: Character) -> None:
    require_muse()
    assert embedding_backfill(character_id=character.pk, batch=8, queue_pairs=False).embedded == 3
    assert texts("冰美式")[0] == TEXTS[1]
    index = index_cache._cache[character.pk].index
    assert index.has_vector.all()  # filled inline (tests build on the request)
    changed, kept = index.changed_rows, index_cache.counters["unchanged_rows"]
    fact = Fact.objects.get(character=character, text=TEXTS[1])
    character_memory_changed(character_id=character.pk, pool="fact", rows=[fact.pk])  # nothing recall reads
    found = recall_query(name=NAME, request=RecallRequest(query="咖啡", explain=True))["results"]
    assert found and found[0]["text"] == TEXTS[1] and "cosine" in found[0]["explain"]["paths"]
    assert index.changed_rows == changed and index_cache.counters["unchanged_rows"] == kept + 1


def test_a_change_without_detail_rebuilds(character: Character) -> None:
    texts("橘猫")
    built = builds()
    character_memory_changed(character_id=character.pk)
    texts("橘猫")
    assert builds() == built + 1


def test_a_persona_write_keeps_the_index_and_the_next_query_finds_a_new_fact(character: Character) -> None:
    """Persona entries are in no recall pool (reference §4.1): their writes, which come with most
    sessions, are logged in their own pool, and a query after them applies the fact rows alone."""
    assert texts("橘猫团子")[0] == TEXTS[0]
    built = builds()
    version = Character.objects.get(pk=character.pk).memory_version
    persona_entry_create(character_id=character.pk, entity="master", text="主人是一名护士")
    facts_persist(character_id=character.pk, drafts=[draft("主人最近在学弹吉他")])
    assert MemoryChange.objects.filter(character=character, version__gt=version, pool="persona").exists()
    assert texts("吉他")[0] == "主人最近在学弹吉他"
    assert builds() == built


def test_a_mention_suppression_and_its_lift_reach_the_index_as_rows(character: Character) -> None:
    """Recall leaves a suppressed reflection out (§4.2): the mention hook logs the reflection it
    suppressed, and the refresh the one it lifted, so the index follows both without a rebuild."""
    text = "主人很喜欢去海边散步"
    reflection = make_reflection(character=character, text=text, status=Reflection.Status.CONFIRMED)
    character_memory_changed(character_id=character.pk, pool="reflection", rows=[reflection.pk])  # as written
    assert text in texts("海边散步")
    built = builds()
    start = timezone.now()
    suppressed = sum(
        persona_mentions_record(
            character_id=character.pk, reply="周末要不要去海边散步？", now=start + timedelta(hours=hour)
        )
        for hour in range(3)
    )
    assert suppressed == 1
    assert text not in texts("海边散步")
    assert suppressions_refresh(character_id=character.pk, now=start + timedelta(hours=8)) == 1
    assert text in texts("海边散步")
    assert builds() == built


def test_a_logged_row_recall_reads_no_field_of_is_kept_and_an_edit_replaces_its_row(
    character: Character,
) -> None:
    """Most of a session's reflection changes are evidence (feedback, rebuttal, decay): the index keeps
    the row it has instead of replacing it; a text edit is still applied."""
    text = "主人很喜欢去海边散步"
    reflection = make_reflection(character=character, text=text, status=Reflection.Status.CONFIRMED)
    character_memory_changed(character_id=character.pk, pool="reflection", rows=[reflection.pk])  # as written
    assert text in texts("海边散步")
    index = index_cache._cache[character.pk].index
    changed, kept, built = index.changed_rows, index_cache.counters["unchanged_rows"], builds()
    with transaction.atomic():
        reflection_signal_apply(
            reflection=reflection, signal=Signal.REINFORCES, source="test", now=timezone.now()
        )
    assert text in texts("海边散步")
    assert index.changed_rows == changed and index_cache.counters["unchanged_rows"] == kept + 1

    reflection_edit(
        character_id=character.pk, reflection_id=reflection.reflection_id, text="主人很喜欢去山里露营"
    )
    assert texts("露营") == ["主人很喜欢去山里露营"]
    assert text not in texts("海边散步")
    assert index.changed_rows == changed + 2  # the old row tombstoned, the new one appended
    assert builds() == built


def test_a_pruned_log_rebuilds(character: Character) -> None:
    texts("橘猫")
    built = builds()
    facts_persist(character_id=character.pk, drafts=[draft("主人最近在学弹吉他")])
    facts_persist(character_id=character.pk, drafts=[draft("主人下个月要去东京旅行")])
    version = Character.objects.get(pk=character.pk).memory_version
    MemoryChange.objects.filter(character=character, version=version - 1).delete()
    assert not memory_changes_since(character_id=character.pk, version=version - 2).complete
    assert texts("东京")[0] == "主人下个月要去东京旅行"
    assert texts("吉他")[0] == "主人最近在学弹吉他"
    assert builds() == built + 1


def test_a_restarted_process_loads_the_saved_index_and_catches_up(character: Character) -> None:
    assert texts("橘猫团子")[0] == TEXTS[0]  # builds and saves
    built, loads = builds(), index_cache.counters["snapshot_loads"]
    index_cache.clear()  # what a restart forgets
    facts_persist(character_id=character.pk, drafts=[draft("主人最近在学弹吉他")])
    assert texts("吉他")[0] == "主人最近在学弹吉他"
    assert texts("橘猫团子")[0] == TEXTS[0]
    assert builds() == built and index_cache.counters["snapshot_loads"] == loads + 1


def test_a_snapshot_of_another_character_incarnation_is_never_used(character: Character) -> None:
    texts("橘猫")
    built = builds()
    index_cache.clear()
    # The same key and version in a recreated database: the creation time tells them apart.
    Character.objects.filter(pk=character.pk).update(created_at=timezone.now() + timedelta(seconds=1))
    texts("橘猫")
    assert builds() == built + 1


def test_a_starting_worker_warms_the_recent_characters_indexes(character: Character) -> None:
    texts("橘猫")  # built and saved by an earlier process
    index_cache.clear()
    loads, built = index_cache.counters["snapshot_loads"], builds()
    index_cache.recall_indexes_warm_up()
    assert index_cache.counters["snapshot_loads"] == loads + 1
    texts("橘猫")
    assert builds() == built and index_cache.counters["snapshot_loads"] == loads + 1  # served as loaded


def test_before_serving_a_worker_loads_saved_indexes_and_builds_none(character: Character) -> None:
    texts("橘猫")  # built and saved by an earlier process
    other = character_get_or_create(name="没存过")
    facts_persist(character_id=other.pk, drafts=[draft("主人喜欢吃草莓蛋糕")])  # no index saved yet
    index_cache.clear()
    loads, built = index_cache.counters["snapshot_loads"], builds()
    assert index_cache.recall_indexes_load_saved() == 1
    assert builds() == built and index_cache.counters["snapshot_loads"] == loads + 1
    texts("橘猫")
    assert builds() == built  # served as loaded


def test_the_prune_keeps_the_newest_versions_and_a_reader_behind_it_rebuilds(character: Character) -> None:
    from nekomem.characters.services import memory_changes_prune

    texts("橘猫")
    built = builds()
    for text in ("主人最近在学弹吉他", "主人下个月要去东京旅行", "主人喜欢吃草莓蛋糕"):
        facts_persist(character_id=character.pk, drafts=[draft(text)])
    version = Character.objects.get(pk=character.pk).memory_version
    rows_before = MemoryChange.objects.filter(character=character).count()
    assert {version - 2, version - 1, version} <= set(
        MemoryChange.objects.filter(character=character).values_list("version", flat=True)
    )

    removed = memory_changes_prune(kept_versions=2)
    kept = set(MemoryChange.objects.filter(character=character).values_list("version", flat=True))
    assert kept == {version - 1, version}
    assert removed == rows_before - MemoryChange.objects.filter(character=character).count() > 0
    assert memory_changes_since(character_id=character.pk, version=version - 2).complete
    assert not memory_changes_since(character_id=character.pk, version=version - 3).complete
    # This process's index is behind the pruned stretch: it rebuilds once and answers with every fact.
    assert texts("吉他")[0] == "主人最近在学弹吉他"
    assert texts("草莓")[0] == "主人喜欢吃草莓蛋糕"
    assert builds() == built + 1


def test_the_prune_also_bounds_the_rows_kept(character: Character) -> None:
    from nekomem.characters.services import memory_changes_prune

    for text in ("主人最近在学弹吉他", "主人下个月要去东京旅行"):
        facts_persist(character_id=character.pk, drafts=[draft(text)])
    version = Character.objects.get(pk=character.pk).memory_version
    memory_changes_prune(kept_versions=1000, kept_rows=1)
    assert set(MemoryChange.objects.filter(character=character).values_list("version", flat=True)) == {
        version
    }
