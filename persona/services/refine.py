"""Persona refine (reference §3.8): near-identical entries of one section are clustered by their
stored vectors and the model merges, splits, modifies or discards them.

Per character and per entity section (``master``, ``neko``, ``relationship``) on the correction tier
with thinking on; the scoped refine takes each group-chat subject's ``@…`` section on its own, on the
summary tier without thinking, so no cluster mixes a subject with the private sections or another
subject. Protected entries (the character card, the ``__meta__`` marker) are never candidates, so the
model never sees them and no action can reach them. Powerful memory OFF pauses refine.

A merge keeps the first member's id, takes the larger evidence of all (as merge-on-promote does,
§3.5.3) and lists the others in ``merged_from_ids``; a split keeps the id with the first part and adds
the others as new entries with the same evidence; a modify edits the text in place (the old text goes
into ``version_history``, at most 5, like a corrections merge); a discard moves the entry into the
archive shards, from which a person can restore it.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from nekomem.characters.language import character_language
from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.characters.services import character_memory_changed
from nekomem.embeddings import decode_vector, text_fingerprint, vector_space
from nekomem.journal.causes import caused_by, change_detail
from nekomem.journal.jobs import register_job_kind
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_enabled
from persona.models import CHANGE_POOL, PersonaEntry
from persona.prompts import refine_messages
from persona.services.archive import persona_shard_take
from persona.services.entries import (
    entry_event,
    entry_evidence_event,
    entry_save,
    entry_text_replace,
)
from persona.services.records import (
    ENTITY_SECTIONS,
    META_SECTION,
    evidence_of,
    evidence_set,
    manual_entry_id,
    score_of,
    token_cache_refresh,
    version_pushed,
)
from reflections.services import (
    Cluster,
    RefineAction,
    RefineGroup,
    RefineItem,
    RefineReport,
    evidence_merged,
    refine_pass,
)

REFINE_JOB = "persona.refine"
SCOPED_REFINE_JOB = "persona.scoped_refine"
REFINE_SOURCE = "refine"
# The scoped and speaker fields a split part inherits from its entry.
SUBJECT_KEYS = ("subject_", "speaker_", "scope")


def register_refine_jobs() -> None:
    register_job_kind(REFINE_JOB, handler=None, tier="correction", self_heal=True)
    register_job_kind(SCOPED_REFINE_JOB, handler=None, tier="summary", self_heal=True)


def _candidates(*, character_id: int, scoped: bool) -> list[PersonaEntry]:
    if scoped:
        rows = PersonaEntry.with_subjects.filter(character_id=character_id).exclude(subject_key="")
    else:
        rows = PersonaEntry.objects.filter(
            character_id=character_id, subject_key="", section__in=ENTITY_SECTIONS
        )
    rows = rows.filter(protected=False, archive_shard_path__isnull=True).exclude(section=META_SECTION)
    return list(rows.order_by("section", "position", "pk"))


def _groups(rows: list[PersonaEntry], *, model_id: str, dim: int) -> tuple[list[RefineGroup], int]:
    """(one group per section, entries with a usable vector)."""
    by_section: dict[str, list[RefineItem]] = {}
    with_vector = 0
    for row in rows:
        if row.embedding_model_id != model_id or row.embedding_text_sha256 != text_fingerprint(row.text):
            continue
        vector = decode_vector(row.embedding, dim)
        if vector is None:
            continue
        with_vector += 1
        by_section.setdefault(row.section, []).append(
            RefineItem(
                key=row.entry_id,
                vector=vector,
                last_hash=row.last_refine_cluster_hash,
                last_at=row.last_refine_at,
            )
        )
    return [RefineGroup(label=section, items=items) for section, items in by_section.items()], with_vector


@caused_by("refine")
def persona_refine(*, character_id: int, scoped: bool = False, now: datetime | None = None) -> RefineReport:
    """One refine pass over the character's entity sections, or (``scoped``) its subjects' sections."""
    now = now or timezone.now()
    if not switch_enabled(POWERFUL_MEMORY):
        return RefineReport(reason="powerful memory off")
    character = Character.objects.get(pk=character_id)
    rows = _candidates(character_id=character_id, scoped=scoped)
    space = vector_space()
    groups, with_vector = ([], 0) if space is None else _groups(rows, model_id=space.model_id, dim=space.dim)
    missing = ""
    if space is None:
        missing = "embeddings_off"
    elif len(rows) >= 2 and with_vector == 0:
        missing = "not_embedded_yet"
    language = character_language(character)
    by_id = {row.entry_id: row for row in rows}

    def messages(group: RefineGroup, cluster: Cluster) -> list[dict[str, object]]:
        return refine_messages(
            name=character.name,
            section=group.label,
            members=[(by_id[key].text, score_of(by_id[key], now=now)) for key in cluster.keys],
            language=language,
        )

    def apply(group: RefineGroup, cluster: Cluster, actions: list[RefineAction]) -> int | None:
        return _apply(character=character, cluster=cluster, read=by_id, actions=actions, now=now)

    report = refine_pass(
        character_id=character_id,
        kind=SCOPED_REFINE_JOB if scoped else REFINE_JOB,
        scoped=scoped,
        groups=groups,
        missing_vectors=missing,
        messages=messages,  # type: ignore[arg-type]
        apply=apply,
        now=now,
    )
    return report


def _unchanged(current: PersonaEntry, read: PersonaEntry) -> bool:
    return (
        current.text == read.text
        and current.section == read.section
        and not current.protected
        and current.archive_shard_path is None
    )


def _apply(
    *,
    character: Character,
    cluster: Cluster,
    read: dict[str, PersonaEntry],
    actions: list[RefineAction],
    now: datetime,
) -> int | None:
    with transaction.atomic():
        lock_character(character.pk)
        current = {
            e.entry_id: e
            for e in PersonaEntry.with_subjects.filter(character_id=character.pk, entry_id__in=cluster.keys)
        }
        if any(key not in current or not _unchanged(current[key], read[key]) for key in cluster.keys):
            return None  # a person, a correction or the card changed a member since the model read it
        members = [current[key] for key in cluster.keys]
        pks = [entry.pk for entry in members]  # read now: a deleted member's instance loses its pk
        gone: set[str] = set()
        # Each member's change is recorded under the action that made it (its version's detail).
        acted: list[tuple[str, list[int]]] = []
        for action in actions:
            rows = [members[i] for i in action.members]
            acted.append((action.action, [pks[i] for i in action.members]))
            with change_detail(action.action):
                if action.action == "merge":
                    _merge(target=rows[0], others=rows[1:], text=action.texts[0], now=now)
                    gone.update(e.entry_id for e in rows[1:])
                elif action.action == "split":
                    _split(character=character, entry=rows[0], texts=action.texts, now=now)
                elif action.action == "modify":
                    entry_text_replace(entry=rows[0], text=action.texts[0], now=now, reason="refine_modify")
                else:
                    _discard(entry=rows[0], now=now)
                    gone.add(rows[0].entry_id)
        # The survivors remember this cluster: the same members are not asked about again for 30 days.
        for entry in members:
            if entry.entry_id in gone:
                continue
            entry.refresh_from_db()
            entry.last_refine_cluster_hash = cluster.hash
            entry.last_refine_at = now
            entry.save(update_fields=["last_refine_cluster_hash", "last_refine_at", "updated_at"])
        for name, rows_acted in acted:
            with change_detail(name):
                character_memory_changed(character_id=character.pk, pool=CHANGE_POOL, rows=rows_acted)
        seen = sorted(set(pks) - {pk for _, rows_acted in acted for pk in rows_acted})
        if seen or not acted:
            character_memory_changed(character_id=character.pk, pool=CHANGE_POOL, rows=seen)
    return len(actions)


def _merge(*, target: PersonaEntry, others: list[PersonaEntry], text: str, now: datetime) -> None:
    evidence = evidence_of(target)
    for other in others:
        evidence = evidence_merged(evidence, evidence_of(other), now=now)
    if text != target.text:
        target.version_history = version_pushed(
            target.version_history, text=target.text, now=now, reason="refine_merge"
        )
        target.text = text
    evidence_set(target, evidence)
    target.sub_zero_days = 0
    target.sub_zero_last_increment_date = None
    target.merged_from_ids = [*target.merged_from_ids, *(o.entry_id for o in others)]
    token_cache_refresh(target)
    target.save()
    entry_evidence_event(target, source="promote_merge")
    entry_event(target, "persona.entry_updated", reason="refine_merge")
    for other in others:
        entry_event(other, "persona.entry_updated", removed=True, reason="refine_merge")
        other.delete()


def _part_id(*, character_id: int, text: str, now: datetime) -> str:
    """A ``manual_`` id as every other add gets, numbered when the same text came the same second."""
    base = manual_entry_id(text, now=now)
    taken = set(
        PersonaEntry.with_subjects.filter(character_id=character_id, entry_id__startswith=base).values_list(
            "entry_id", flat=True
        )
    )
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}_{n}"
    return candidate


def _split(*, character: Character, entry: PersonaEntry, texts: tuple[str, ...], now: datetime) -> None:
    entry_text_replace(entry=entry, text=texts[0], now=now, reason="refine_split")
    for text in texts[1:]:
        last = PersonaEntry.with_subjects.filter(character_id=character.pk, section=entry.section).aggregate(
            m=Max("position")
        )["m"]
        part = PersonaEntry(
            character_id=character.pk,
            entry_id=_part_id(character_id=character.pk, text=text, now=now),
            section=entry.section,
            subject_key=entry.subject_key,
            position=0 if last is None else last + 1,
            text=text,
            source=REFINE_SOURCE,
            source_id=entry.entry_id,
            created_at=now,
            extra={
                k: v
                for k, v in (entry.extra or {}).items()
                if k.startswith(("subject_", "speaker_", "scope"))
            },
        )
        evidence_set(part, evidence_of(entry))
        entry_save(part, event_type="persona.fact_added", reason="refine_split")


def _discard(*, entry: PersonaEntry, now: datetime) -> None:
    entry.archive_shard_path = persona_shard_take(character_id=entry.character_id, now=now)
    entry.archived_at = now
    entry.save()
    entry_event(entry, "persona.entry_updated", reason="refine_discard")
