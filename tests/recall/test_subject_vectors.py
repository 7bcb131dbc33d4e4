"""Vectors of group-chat subjects' reflections and persona entries (issue 34): the embedding backfill embeds
them like the master's; a scoped ``/query_memory`` reaches a subject's reflection through the cosine path,
an unscoped one never; forgetting the subject takes the rows and their vectors with it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from groupchat.services import scoped_forget
from nekomem.characters.models import Character
from nekomem.characters.services import character_memory_changed
from nekomem.embeddings import get_embedder
from nekomem.runtime.status import vector_coverage
from nekomem.subjects import subject_parse
from persona.models import PersonaEntry
from recall.backfill import characters_needing_vectors, embedding_backfill
from recall.services import RecallRequest, recall_query
from reflections.models import RECALL_POOL as REFLECTION_POOL
from reflections.models import Reflection
from tests.persona.factories import make_entry
from tests.recall.support import fact_entry, import_facts, require_muse
from tests.reflections.factories import make_reflection

NAME = "小群"
ALICE = subject_parse({"subject_kind": "group_participant", "subject_id": "qq:7788:1001"})
# No word in common with the query "咖啡": only the cosine path can find it.
REFLECTION = "Alice 一天要喝三杯拿铁"


@pytest.fixture
def character(tmp_path: Path, db) -> Character:
    require_muse()
    now = timezone.now()
    import_facts(tmp_path, NAME, [fact_entry("主人周末喜欢去爬山", now - timedelta(days=1))])
    return Character.objects.get(name=NAME)


def subject_rows(character: Character) -> tuple[Reflection, PersonaEntry]:
    reflection = make_reflection(
        character=character,
        text=REFLECTION,
        status=Reflection.Status.CONFIRMED,
        subject_key=ALICE.key,
        extra=ALICE.as_dict(),
    )
    character_memory_changed(character_id=character.pk, pool=REFLECTION_POOL, rows=[reflection.pk])
    entry = make_entry(
        character=character, text="Alice 是夜班护士", section=ALICE.section, subject_key=ALICE.key
    )
    return reflection, entry


def found(query: str, subjects: list[str] | None) -> list[tuple[str, set[str]]]:
    request = RecallRequest(query=query, subjects=subjects, explain=True)
    return [
        (r["text"], set(r["explain"]["paths"])) for r in recall_query(name=NAME, request=request)["results"]
    ]


def test_the_backfill_embeds_subjects_reflections_and_entries(character: Character) -> None:
    embedder = get_embedder()
    assert embedder is not None
    reflection, entry = subject_rows(character)
    before = vector_coverage(embedder.model_id)
    assert character.pk in characters_needing_vectors(model_id=embedder.model_id)

    report = embedding_backfill(character_id=character.pk, queue_pairs=False)

    assert (report.persona, report.reflections) == (1, 1)
    reflection.refresh_from_db()
    entry.refresh_from_db()
    assert reflection.cached_vector(embedder) is not None and entry.cached_vector(embedder) is not None
    assert vector_coverage(embedder.model_id).without_vectors == 0 < before.without_vectors
    assert character.pk not in characters_needing_vectors(model_id=embedder.model_id)
    assert embedding_backfill(character_id=character.pk, queue_pairs=False).embedded == 0


LEXICAL = {"bm25:words", "bm25:original"}


def test_scoped_recall_uses_the_subjects_vectors_and_unscoped_never_sees_them(character: Character) -> None:
    subject_rows(character)
    embedding_backfill(character_id=character.pk, queue_pairs=False)

    scoped = found("咖啡", [ALICE.key])
    # Found by its vector, not by the query's words ("bm25:feedback": the found rows' own terms).
    assert any(text == REFLECTION and "cosine" in paths and not paths & LEXICAL for text, paths in scoped), (
        scoped
    )
    assert all(REFLECTION not in text for text, _ in found("咖啡", None))
    assert all(REFLECTION not in text for text, _ in found("拿铁", None))
    other = subject_parse({"subject_kind": "group_participant", "subject_id": "qq:7788:1002"})
    assert all(REFLECTION not in text for text, _ in found("咖啡", [other.key]))


def test_forgetting_the_subject_removes_its_vectors(character: Character) -> None:
    subject_rows(character)
    embedding_backfill(character_id=character.pk, queue_pairs=False)
    assert Reflection.with_subjects.filter(subject_key=ALICE.key).exclude(embedding="").exists()

    forgotten = scoped_forget(character_id=character.pk, subject=ALICE)

    assert forgotten.counts["reflections"] == 1 and forgotten.counts["persona_entries"] == 1
    assert not Reflection.with_subjects.filter(character=character).exclude(subject_key="").exists()
    assert not PersonaEntry.with_subjects.filter(character=character).exclude(subject_key="").exists()
    assert all(REFLECTION not in text for text, _ in found("咖啡", [ALICE.key]))
