"""Reflection refine (reference §3.8): near-identical pending and confirmed reflections of one entity
are clustered by their stored vectors and the model merges, splits, modifies or discards them.

Private reflections are refined per entity on the correction tier with thinking on; a group-chat
subject's reflections (the scoped refine) per subject and entity on the summary tier without thinking,
so a cluster never mixes a subject with the private chat or with another subject. Powerful memory OFF
pauses both (the design doc: refine runs only while the switch is on). Every change goes through the
same events and memory-change log as the other reflection writes.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from nekomem.characters.language import character_language
from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.characters.services import character_memory_changed
from nekomem.embeddings import decode_vector, text_fingerprint, vector_space
from nekomem.journal.causes import caused_by, change_detail
from nekomem.journal.jobs import register_job_kind
from nekomem.journal.services import event_append
from nekomem.language.counting import count_tokens
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_enabled
from reflections.evidence import evidence_merged
from reflections.models import RECALL_POOL, Reflection
from reflections.ontology import MAX_ONTOLOGY_TEXT_TOKENS
from reflections.prompts import refine_messages
from reflections.refine import (
    Cluster,
    RefineAction,
    RefineGroup,
    RefineItem,
    RefineReport,
    refine_pass,
)
from reflections.services.archive import reflection_archive_into_shard
from reflections.services.lifecycle import reflection_fields_set, reflection_transition
from reflections.services.records import (
    ACTIVE_STATUSES,
    evidence_of,
    evidence_set,
    evidence_snapshot,
    reflection_to_file_dict,
    score_of,
)

REFINE_JOB = "reflections.refine"
SCOPED_REFINE_JOB = "reflections.scoped_refine"
# The original's evidence vocabulary has one merge source; a refine merge is the same operation.
MERGE_SOURCE = "promote_merge"


def register_refine_jobs() -> None:
    register_job_kind(REFINE_JOB, handler=None, tier="correction", self_heal=True)
    register_job_kind(SCOPED_REFINE_JOB, handler=None, tier="summary", self_heal=True)


def _candidates(*, character_id: int, scoped: bool) -> list[Reflection]:
    manager = Reflection.with_subjects if scoped else Reflection.objects
    rows = manager.filter(
        character_id=character_id, status__in=ACTIVE_STATUSES, archive_shard_path__isnull=True
    )
    rows = rows.exclude(subject_key="") if scoped else rows.filter(subject_key="")
    return list(rows.order_by("created_at", "pk"))


def _groups(rows: list[Reflection], *, model_id: str, dim: int) -> tuple[list[RefineGroup], int]:
    """(groups, rows with a usable vector): one group per subject and entity."""
    by_group: dict[tuple[str, str], list[RefineItem]] = defaultdict(list)
    with_vector = 0
    for row in rows:
        if row.embedding_model_id != model_id or row.embedding_text_sha256 != text_fingerprint(row.text):
            continue
        vector = decode_vector(row.embedding, dim)
        if vector is None:
            continue
        with_vector += 1
        by_group[(row.subject_key, row.entity)].append(
            RefineItem(
                key=row.reflection_id,
                vector=vector,
                last_hash=row.last_refine_cluster_hash,
                last_at=row.last_refine_at,
            )
        )
    return [RefineGroup(label=entity, items=items) for (_, entity), items in by_group.items()], with_vector


def _missing_vectors(rows: list[Reflection], with_vector: int, space_ready: bool) -> str:
    if not space_ready:
        return "embeddings_off"
    if len(rows) >= 2 and with_vector == 0:
        return "not_embedded_yet"
    return ""


@caused_by("refine")
def reflections_refine(
    *, character_id: int, scoped: bool = False, now: datetime | None = None
) -> RefineReport:
    """One refine pass over the character's private reflections, or (``scoped``) its subjects'."""
    now = now or timezone.now()
    if not switch_enabled(POWERFUL_MEMORY):
        return RefineReport(reason="powerful memory off")
    character = Character.objects.get(pk=character_id)
    rows = _candidates(character_id=character_id, scoped=scoped)
    space = vector_space()
    groups, with_vector = ([], 0) if space is None else _groups(rows, model_id=space.model_id, dim=space.dim)
    language = character_language(character)
    by_id = {row.reflection_id: row for row in rows}

    def messages(group: RefineGroup, cluster: Cluster) -> list[dict[str, str]]:
        members = [by_id[key] for key in cluster.keys]
        return refine_messages(
            name=character.name,
            master=character.master_name,
            members=[(r.text, score_of(r, now=now)) for r in members],
            language=language,
        )

    def apply(group: RefineGroup, cluster: Cluster, actions: list[RefineAction]) -> int | None:
        return _apply(character_id=character_id, cluster=cluster, read=by_id, actions=actions, now=now)

    report = refine_pass(
        character_id=character_id,
        kind=SCOPED_REFINE_JOB if scoped else REFINE_JOB,
        scoped=scoped,
        groups=groups,
        missing_vectors=_missing_vectors(rows, with_vector, space is not None),
        messages=messages,
        apply=apply,
        now=now,
    )
    return report


def _unchanged(current: Reflection, read: Reflection) -> bool:
    return (
        current.text == read.text
        and current.status in ACTIVE_STATUSES
        and current.archive_shard_path is None
        and current.subject_key == read.subject_key
    )


def _apply(
    *,
    character_id: int,
    cluster: Cluster,
    read: dict[str, Reflection],
    actions: list[RefineAction],
    now: datetime,
) -> int | None:
    with transaction.atomic():
        lock_character(character_id)
        current = {
            r.reflection_id: r
            for r in Reflection.with_subjects.filter(
                character_id=character_id, reflection_id__in=cluster.keys
            )
        }
        if any(key not in current or not _unchanged(current[key], read[key]) for key in cluster.keys):
            return None  # a person or another loop changed a member since the model read it
        members = [current[key] for key in cluster.keys]
        gone: set[str] = set()
        # Each row's change is recorded under the action that made it (its version's detail).
        acted: list[tuple[str, list[int]]] = []
        for action in actions:
            rows = [members[i] for i in action.members]
            touched: list[int] = []
            with change_detail(action.action):
                if action.action == "merge":
                    _merge(target=rows[0], others=rows[1:], text=action.texts[0], now=now)
                    gone.update(r.reflection_id for r in rows[1:])
                elif action.action == "split":
                    touched.extend(_split(reflection=rows[0], texts=action.texts, now=now))
                elif action.action == "modify":
                    _text_set(rows[0], action.texts[0], now=now, reason="refine_modify")
                else:
                    reflection_archive_into_shard(reflection=rows[0], now=now, reason="refine_discard")
                    gone.add(rows[0].reflection_id)
            touched.extend(r.pk for r in rows)
            acted.append((action.action, touched))
        # The survivors remember this cluster: the same members are not asked about again for 30 days.
        for reflection in members:
            if reflection.reflection_id in gone:
                continue
            reflection_fields_set(
                reflection=reflection,
                now=now,
                reason="refine_seen",
                fields={"last_refine_cluster_hash": cluster.hash, "last_refine_at": now},
            )
        for name, rows_acted in acted:
            with change_detail(name):
                character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=rows_acted)
    return len(actions)


def _text_set(
    reflection: Reflection, text: str, *, now: datetime, reason: str, extra: dict[str, Any] | None = None
) -> None:
    """A new text with its ``reflection.state_changed`` (the status stays), as a hand edit does."""
    changed: dict[str, str | None] = {"text": text}
    if count_tokens(text) > MAX_ONTOLOGY_TEXT_TOKENS:
        changed.update({"relation_type": None, "temporal_scope": None, "subject": None})
    reflection_fields_set(reflection=reflection, now=now, reason=reason, fields=changed, extra=extra)


def _merge(*, target: Reflection, others: list[Reflection], text: str, now: datetime) -> None:
    """The first member takes the merged text and the larger evidence of all (§3.5.3's merge); the
    others become ``merged`` into it, their ids kept in its ``merged_from_ids``."""
    evidence = evidence_of(target)
    for other in others:
        evidence = evidence_merged(evidence, evidence_of(other), now=now)
    evidence_set(target, evidence)
    target.sub_zero_days = 0
    target.sub_zero_last_increment_date = None
    merged_from = list((target.extra or {}).get("merged_from_ids") or [])
    merged = {"merged_from_ids": [*merged_from, *(o.reflection_id for o in others)]}
    _text_set(target, text, now=now, reason="refine_merge", extra=merged)
    event_append(
        character_id=target.character_id,
        event_type="reflection.evidence_updated",
        payload=evidence_snapshot(target, source=MERGE_SOURCE),
    )
    for other in others:
        reflection_transition(
            reflection=other,
            to=Reflection.Status.MERGED,
            now=now,
            reason="refine_merge",
            also={"absorbed_into": target.reflection_id},
        )


def split_reflection_id(reflection_id: str, text: str) -> str:
    """Deterministic like every reflection id: the parent's id and the part's text."""
    digest = hashlib.sha256(f"{reflection_id}\x00split\x00{text}".encode()).hexdigest()[:16]
    return f"ref_{digest}"


def _split(*, reflection: Reflection, texts: tuple[str, ...], now: datetime) -> list[int]:
    """The reflection keeps its id with the first part; each further part is a new reflection of the
    same entity, status, sources and evidence. Returns the new rows' keys."""
    _text_set(reflection, texts[0], now=now, reason="refine_split")
    made: list[int] = []
    for text in texts[1:]:
        part_id = split_reflection_id(reflection.reflection_id, text)
        if Reflection.with_subjects.filter(
            character_id=reflection.character_id, reflection_id=part_id
        ).exists():
            continue
        part = Reflection.with_subjects.create(
            character_id=reflection.character_id,
            reflection_id=part_id,
            text=text,
            entity=reflection.entity,
            status=reflection.status,
            source_fact_ids=reflection.source_fact_ids,
            created_at=now,
            confirmed_at=reflection.confirmed_at,
            next_eligible_at=reflection.next_eligible_at,
            reinforcement=reflection.reinforcement,
            disputation=reflection.disputation,
            rein_last_signal_at=reflection.rein_last_signal_at,
            disp_last_signal_at=reflection.disp_last_signal_at,
            event_when_raw=reflection.event_when_raw,
            event_start_at=reflection.event_start_at,
            event_end_at=reflection.event_end_at,
            subject_key=reflection.subject_key,
            extra={
                **{k: v for k, v in (reflection.extra or {}).items() if k != "merged_from_ids"},
                "split_from_id": reflection.reflection_id,
            },
        )
        event_append(
            character_id=reflection.character_id,
            event_type="reflection.synthesized",
            payload=reflection_to_file_dict(part),
        )
        made.append(part.pk)
    return made
