"""Reads of the persona layer; every query is scoped to one character."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import Case, Count, IntegerField, Q, QuerySet, Value, When

from nekomem.runtime.status import VectorCoverage
from nekomem.subjects import SUBJECTS_ALL, subject_rows
from persona.models import PersonaCorrection, PersonaEntry, PersonaSection, PersonaState
from persona.rendering import (
    PERSONA_TOKENS,
    long_term_memory_markdown,
    rendered_forget,
    scoped_section_header,
    settings_text,
)
from persona.services.mentions import suppression_active
from persona.services.records import entry_to_file_dict
from reflections.selectors import vector_cache_coverage, vector_cache_stale

__all__ = [
    "PERSONA_TOKENS",
    "characters_with_unvectored_persona",
    "entry_to_file_dict",
    "long_term_memory_markdown",
    "persona_corrections_dropped",
    "persona_corrections_list",
    "persona_entries_archived",
    "persona_entries_browse",
    "persona_entries_live",
    "persona_entries_needing_vectors",
    "persona_entry_get",
    "persona_file_view",
    "persona_in_shards",
    "persona_sections",
    "persona_state",
    "persona_vector_coverage",
    "rendered_forget",
    "scoped_section_header",
    "settings_text",
    "suppression_active",
]


def persona_sections(*, character_id: int, subject: str = "") -> list[PersonaSection]:
    """``subject``: the browser's filter (``nekomem.subjects.subject_rows``); "" the master's only."""
    sections = subject_rows(PersonaSection.with_subjects, subject).filter(character_id=character_id)
    return list(sections.order_by("position", "pk"))


def persona_entries_live(*, character_id: int, subject: str = "") -> QuerySet[PersonaEntry]:
    """Entries of ``persona.json`` (not in an archive shard), in file order within each section;
    ``subject`` the browser's filter (``nekomem.subjects.subject_rows``), "" the master's only."""
    return (
        subject_rows(PersonaEntry.with_subjects, subject)
        .filter(character_id=character_id, archive_shard_path__isnull=True)
        .order_by("position", "pk")
    )


def persona_entries_archived(*, character_id: int, subject: str = "") -> QuerySet[PersonaEntry]:
    """Entries the archive sweep moved into a shard, the most recently archived first."""
    return (
        subject_rows(PersonaEntry.with_subjects, subject)
        .filter(character_id=character_id, archive_shard_path__isnull=False)
        .order_by("-archived_at", "-pk")
    )


def persona_entries_browse(
    *, character_id: int, section: str = "", query: str = "", subject: str = ""
) -> QuerySet[PersonaEntry]:
    """The memory browser's list: live entries in render order (section order, then file order);
    ``subject`` as in ``persona_sections``."""
    entries = subject_rows(PersonaEntry.with_subjects, subject).filter(
        character_id=character_id, archive_shard_path__isnull=True
    )
    if section:
        entries = entries.filter(section=section)
    if query:
        entries = entries.filter(Q(text__icontains=query) | Q(entry_id=query))
    # A character has a handful of sections: their order goes into the query as constants, which the
    # database sorts by far faster than by a per-row lookup of the section's position.
    order = [
        When(section=s.key, then=Value(s.position))
        for s in persona_sections(character_id=character_id, subject=subject)
    ]
    section_position = Case(*order, default=Value(None), output_field=IntegerField()) if order else Value(0)
    return entries.order_by(section_position.asc(nulls_last=True), "section", "position", "pk")


def persona_entry_get(*, character_id: int, entry_id: str) -> PersonaEntry | None:
    return PersonaEntry.objects.filter(character_id=character_id, entry_id=entry_id).first()


def persona_in_shards(*, character_id: int) -> dict[str, list[PersonaEntry]]:
    rows = PersonaEntry.with_subjects.filter(
        character_id=character_id, archive_shard_path__isnull=False
    ).order_by("pk")
    shards: dict[str, list[PersonaEntry]] = {}
    for entry in rows:
        shards.setdefault(entry.archive_shard_path or "", []).append(entry)
    return shards


def persona_corrections_list(
    *, character_id: int, dropped_too: bool = False, with_subjects: bool = False, subject: str = ""
) -> QuerySet[PersonaCorrection]:
    """The queue (``persona_corrections.json``): pairs the resolver still tries (``dropped_too``: and
    those it gave up on; ``with_subjects``: group-chat subjects' pairs too; ``subject``: the browser's
    filter, as in ``persona_sections``)."""
    rows = subject_rows(PersonaCorrection.with_subjects, SUBJECTS_ALL if with_subjects else subject)
    rows = rows.filter(character_id=character_id)
    return (rows if dropped_too else rows.filter(dropped_at__isnull=True)).order_by("pk")


def persona_corrections_dropped(*, character_id: int, subject: str = "") -> QuerySet[PersonaCorrection]:
    """Pairs the resolver gave up on after 5 attempts, newest first: they wait for a person."""
    return (
        subject_rows(PersonaCorrection.with_subjects, subject)
        .filter(character_id=character_id, dropped_at__isnull=False)
        .order_by("-dropped_at", "-pk")
    )


def persona_state(*, character_id: int) -> PersonaState | None:
    return PersonaState.objects.filter(character_id=character_id).first()


def persona_file_view(*, character_id: int, with_subjects: bool = False) -> dict[str, dict[str, Any]]:
    """``persona.json`` as the original holds it: sections in key order, entries in file order; the
    ``@subject/…`` sections only for export (``with_subjects``), never on an unscoped route."""
    view: dict[str, dict[str, Any]] = {}
    sections = PersonaSection.with_subjects if with_subjects else PersonaSection.objects
    entries = PersonaEntry.with_subjects if with_subjects else PersonaEntry.objects
    for section in sections.filter(character_id=character_id).order_by("position", "pk"):
        view[section.key] = {**section.extra}
        view[section.key].setdefault("facts", [])
    live = entries.filter(character_id=character_id, archive_shard_path__isnull=True).order_by(
        "position", "pk"
    )
    for entry in live:
        view.setdefault(entry.section, {"facts": []})["facts"].append(entry_to_file_dict(entry))
    return view


def persona_event_seeds(character_id: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """The seeds event-log compaction writes for the persona view (reference §2.14): each entry as it
    stands, the snapshot a ``persona.fact_added`` replay writes back as it was."""
    entries = PersonaEntry.with_subjects.filter(character_id=character_id).order_by(
        "section", "position", "pk"
    )
    for entry in entries.iterator(chunk_size=1000):
        yield (
            "persona.fact_added",
            {"section": entry.section, "position": entry.position, "entry": entry_to_file_dict(entry)},
        )


def persona_entries_needing_vectors(*, character_id: int, model_id: str, limit: int) -> list[tuple[int, str]]:
    """(pk, text) of the character's live entries the embedding backfill still has to embed, group-chat
    subjects' sections included (their vectors serve only scoped reads)."""
    rows = PersonaEntry.with_subjects.filter(character_id=character_id, archive_shard_path__isnull=True)
    return vector_cache_stale(rows, model_id=model_id, limit=limit)


def characters_with_unvectored_persona(*, model_id: str) -> list[int]:
    """Characters with a live entry lacking a vector of ``model_id`` (the SQL test)."""
    missing = Q(embedding="") | ~Q(embedding_model_id=model_id)
    rows = PersonaEntry.with_subjects.filter(missing, archive_shard_path__isnull=True).exclude(text="")
    return list(rows.values_list("character_id", flat=True).distinct().order_by())


def persona_vector_coverage(model_id: str) -> VectorCoverage:
    """The live entries the backfill embeds: with a vector of ``model_id``, and still without."""
    return vector_cache_coverage(
        PersonaEntry.with_subjects.filter(archive_shard_path__isnull=True), model_id=model_id
    )


def persona_entries_of_subjects(*, character_id: int, subject_keys: list[str]) -> QuerySet[PersonaEntry]:
    """Live entries of group-chat subjects' sections; the default manager never returns them."""
    return PersonaEntry.with_subjects.filter(
        character_id=character_id, subject_key__in=subject_keys, archive_shard_path__isnull=True
    ).order_by("position", "pk")


def persona_subject_sections(*, character_id: int, subject_keys: list[str]) -> dict[str, PersonaSection]:
    """The ``@subject/<key>`` section of each subject that has one, by subject key."""
    rows = PersonaSection.with_subjects.filter(character_id=character_id, subject_key__in=subject_keys)
    return {section.subject_key: section for section in rows}


def persona_subject_counts(*, character_id: int) -> dict[str, dict[str, int]]:
    """Per subject key: whether it has a section or entries, and its pending corrections."""
    counts: dict[str, dict[str, int]] = {}
    for key, n in (
        PersonaEntry.with_subjects.filter(character_id=character_id)
        .exclude(subject_key="")
        .values_list("subject_key")
        .annotate(n=Count("pk"))
    ):
        counts.setdefault(key, {"entries": 0, "sections": 0, "corrections": 0})["entries"] = n
    for key in (
        PersonaSection.with_subjects.filter(character_id=character_id)
        .exclude(subject_key="")
        .values_list("subject_key", flat=True)
    ):
        counts.setdefault(key, {"entries": 0, "sections": 0, "corrections": 0})["sections"] = 1
    for key, n in (
        PersonaCorrection.with_subjects.filter(character_id=character_id)
        .exclude(subject_key="")
        .values_list("subject_key")
        .annotate(n=Count("pk"))
    ):
        counts.setdefault(key, {"entries": 0, "sections": 0, "corrections": 0})["corrections"] = n
    return counts


def persona_entry_ids_live(character_id: int) -> list[str]:
    """The ids of the character's PersonaEntry rows that exist (a group-chat subject's and archived ones
    included): compaction keeps their last versions in the journal (``register_live_rows``)."""
    return list(
        PersonaEntry.with_subjects.filter(character_id=character_id).values_list("entry_id", flat=True)
    )
