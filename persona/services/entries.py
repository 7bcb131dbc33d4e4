"""Persona entries: the card mirror, the legacy migration, adds with the contradiction test, merges, edits.

Every function here except the public ``persona_*`` services runs inside the caller's transaction with
the character locked (``_require_atomic`` checks the transaction); each change appends its event.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.characters.services import character_memory_changed
from nekomem.journal.services import event_append
from nekomem.language.tokens import keyword_overlap, keyword_set
from nekomem.statements import instance_get
from nekomem.subjects import subject_key_from_section
from persona.card import card_fields, card_sha
from persona.models import (
    CHANGE_POOL,
    CORRECTION_POOL,
    PersonaCorrection,
    PersonaEntry,
    PersonaSection,
    PersonaState,
)
from persona.services.records import (
    ENTITY_SECTIONS,
    card_entry_id,
    correction_entry_id,
    entry_to_file_dict,
    evidence_of,
    evidence_set,
    legacy_entry_id,
    manual_entry_id,
    token_cache_refresh,
    version_pushed,
)
from reflections.services import Evidence, evidence_merged

logger = logging.getLogger(__name__)

CONTRADICTION_OVERLAP = 0.4
CARD_SOURCE = "character_card"


class AddOutcome(StrEnum):
    ADDED = "added"
    REJECTED_CARD = "rejected_card"
    QUEUED_CORRECTION = "queued_correction"
    # The section already holds this very text: nothing to add and nothing to correct. Without it a
    # confirmed reflection whose text a correction already kept was queued against itself at every
    # promote tick, and each ``keep_both`` added it once more (bench/years.py: 552 entries a character).
    ALREADY_HELD = "already_held"


@dataclass(frozen=True)
class AddResult:
    outcome: AddOutcome
    entry: PersonaEntry | None = None


def _require_atomic() -> None:
    if not connection.in_atomic_block:
        raise RuntimeError("persona writes run inside the caller's locked transaction")


def entry_event(entry: PersonaEntry, event_type: str, **more: Any) -> None:
    payload = {"section": entry.section, "position": entry.position, "entry": entry_to_file_dict(entry)}
    payload.update(more)
    event_append(character_id=entry.character_id, event_type=event_type, payload=payload)


def entry_save(entry: PersonaEntry, *, event_type: str = "persona.entry_updated", **more: Any) -> None:
    token_cache_refresh(entry)
    entry.save()
    entry_event(entry, event_type, **more)
    character_memory_changed(character_id=entry.character_id, pool=CHANGE_POOL, rows=[entry.pk], held=[entry])


# --- sections and positions -------------------------------------------------------------------------------


def section_ensure(*, character_id: int, key: str, extra: dict[str, Any] | None = None) -> PersonaSection:
    # Sections of every subject share one key order, so their positions are read across all of them.
    section = PersonaSection.with_subjects.filter(character_id=character_id, key=key).first()
    if section is None:
        last = PersonaSection.with_subjects.filter(character_id=character_id).aggregate(m=Max("position"))[
            "m"
        ]
        section = PersonaSection.with_subjects.create(
            character_id=character_id,
            key=key,
            position=0 if last is None else last + 1,
            extra=extra or {},
            subject_key=subject_key_from_section(key),
        )
    return section


def _unused_entry_id(*, character_id: int, base: str) -> str:
    """The same text added to two sections within one second would get one id: number the later."""
    taken = set(
        PersonaEntry.objects.filter(character_id=character_id, entry_id__startswith=base).values_list(
            "entry_id", flat=True
        )
    )
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}_{n}"
    return candidate


def _next_position(*, character_id: int, section: str) -> int:
    last = PersonaEntry.objects.filter(character_id=character_id, section=section).aggregate(
        m=Max("position")
    )["m"]
    return 0 if last is None else last + 1


# --- the character card and settings.json -----------------------------------------------------------------


def card_sync(*, character: Character, state: PersonaState, now: datetime) -> int:
    """Mirror ``Character.card`` into protected ``card_`` entries; returns how many entries changed."""
    _require_atomic()
    wanted = {
        card_entry_id(entity, field): (entity, field, text)
        for entity, field, text in card_fields(character.card)
    }
    existing = {
        e.entry_id: e
        for e in PersonaEntry.objects.filter(character_id=character.pk, source=CARD_SOURCE, protected=True)
    }
    changed = 0
    for entry_id, (entity, field, text) in wanted.items():
        entry = existing.get(entry_id)
        if entry is not None and entry.text == text and entry.section == entity:
            continue
        section_ensure(character_id=character.pk, key=entity)
        if entry is None:
            entry = PersonaEntry(
                character_id=character.pk,
                entry_id=entry_id,
                section=entity,
                position=_next_position(character_id=character.pk, section=entity),
                source=CARD_SOURCE,
                source_id=field,
                protected=True,
                created_at=now,
            )
            event_type = "persona.fact_added"
        else:
            event_type = "persona.entry_updated"
            if entry.text != text:  # the vector was of the old text (§12: dropped with the token count)
                entry.embedding, entry.embedding_text_sha256, entry.embedding_model_id = "", "", ""
        entry.text, entry.section = text, entity
        entry_save(entry, event_type=event_type)
        existing[entry_id] = entry
        changed += 1
    for entry_id, entry in list(existing.items()):
        if entry_id not in wanted:
            entry_event(entry, "persona.entry_updated", removed=True)
            entry.delete()
            del existing[entry_id]
            changed += 1
    changed += _card_order_keep(entries=list(existing.values()), wanted=list(wanted))
    state.card_sha256 = card_sha(character.card)
    state.save(update_fields=["card_sha256"])
    return changed


def _card_order_keep(*, entries: list[PersonaEntry], wanted: list[str]) -> int:
    """Card entries stand in card order within their section: a field added in the middle of the card
    takes its place there, not at the end. The positions the card entries hold are handed out again
    in card order, so the other entries keep theirs."""
    moved = 0
    rank = {entry_id: i for i, entry_id in enumerate(wanted)}
    by_section: dict[str, list[PersonaEntry]] = {}
    for entry in sorted(entries, key=lambda e: (e.position, e.pk or 0)):
        by_section.setdefault(entry.section, []).append(entry)
    for section_entries in by_section.values():
        positions = [e.position for e in section_entries]
        in_card_order = sorted(section_entries, key=lambda e: rank.get(e.entry_id, len(rank)))
        if in_card_order == section_entries and len(set(positions)) == len(positions):
            continue
        slots = sorted(set(positions))
        while len(slots) < len(in_card_order):
            slots.append(slots[-1] + 1)
        for entry, position in zip(in_card_order, slots, strict=False):
            if entry.position != position:
                entry.position = position
                entry_save(entry)
                moved += 1
    return moved


def legacy_lines(settings: Any) -> list[tuple[str, str]]:
    """(entity, "key: value") from a legacy settings.json: {entity: {key: value}} or a flat dict."""
    if not isinstance(settings, dict):
        return []
    out: list[tuple[str, str]] = []
    for key, value in settings.items():
        if isinstance(value, dict):
            entity = key if key in ENTITY_SECTIONS else "neko"
            out.extend((entity, f"{k}: {v}") for k, v in value.items() if str(v).strip())
        elif str(value).strip():
            out.append(("master", f"{key}: {value}"))
    return out


def legacy_migrate(*, character_id: int, state: PersonaState, now: datetime) -> int:
    """settings.json → ``legacy_`` entries, once per character."""
    _require_atomic()
    if state.legacy_migrated or not state.legacy_settings:
        return 0
    added = 0
    for entity, text in legacy_lines(state.legacy_settings):
        entry_id = legacy_entry_id(text)
        if PersonaEntry.objects.filter(character_id=character_id, entry_id=entry_id).exists():
            continue
        section_ensure(character_id=character_id, key=entity)
        entry = PersonaEntry(
            character_id=character_id,
            entry_id=entry_id,
            section=entity,
            position=_next_position(character_id=character_id, section=entity),
            text=text,
            source="settings",
            created_at=now,
        )
        entry_save(entry, event_type="persona.fact_added")
        added += 1
    state.legacy_migrated = True
    state.save(update_fields=["legacy_migrated"])
    return added


def persona_prepare(*, character: Character, now: datetime) -> PersonaState:
    """Inside the caller's locked transaction: sections exist, card mirrored, settings migrated once."""
    _require_atomic()
    state, _ = PersonaState.objects.get_or_create(character=character)
    for entity in ENTITY_SECTIONS:
        section_ensure(character_id=character.pk, key=entity)
    if state.card_sha256 != card_sha(character.card):
        card_sync(character=character, state=state, now=now)
    legacy_migrate(character_id=character.pk, state=state, now=now)
    return state


def persona_needs_prepare(*, character: Character, state: PersonaState) -> bool:
    """Cheap check for read paths: does the card mirror or the legacy migration lag behind?"""
    return state.card_sha256 != card_sha(character.card) or (
        bool(state.legacy_settings) and not state.legacy_migrated
    )


def persona_ensure_current(*, character: Character) -> PersonaState:
    """Read paths: run ``persona_ensure`` only when the card or the legacy migration lags behind; the
    current state either way, so the caller need not read it again."""
    state = instance_get(PersonaState, by="character", value=character.pk)  # every /new_dialog reads it
    if state is None or persona_needs_prepare(character=character, state=state):
        return persona_ensure(character_id=character.pk)
    return state


def persona_prepared_early(*, character_id: int) -> bool:
    """After a character's turns, in the background: prepare its persona if it never was, so its first
    ``/new_dialog`` finds the sections made and the card mirrored instead of doing that on the chat
    path (about 20 statements in a locked transaction). True when it prepared it now."""
    if PersonaState.objects.filter(character_id=character_id).exists():
        return False
    persona_ensure(character_id=character_id)
    return True


def persona_ensure(*, character_id: int, now: datetime | None = None) -> PersonaState:
    """``ensure_persona``: run on every read path and before promotion, so the card is always current."""
    now = now or timezone.now()
    with transaction.atomic():
        character = lock_character(character_id)
        return persona_prepare(character=character, now=now)


# --- adding, with the contradiction heuristic (§3.6) -----------------------------------------------------


def contradicts(old_text: str, new_text: str, *, stop_names: list[str]) -> bool:
    return (
        keyword_overlap(keyword_set(old_text, stop_names), keyword_set(new_text, stop_names))
        >= CONTRADICTION_OVERLAP
    )


def _scope_of(extra: dict[str, Any]) -> str:
    return str(extra.get("scope") or extra.get("subject_id") or "")


def correction_key(old_text: str, new_text: str, entity: str, extra: dict[str, Any]) -> str:
    """Same old text, new text, entity and scope → the same queue item (no duplicates)."""
    joined = "\x00".join((old_text, new_text, entity, _scope_of(extra)))
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def correction_enqueue(
    *,
    character_id: int,
    old_text: str,
    new_text: str,
    entity: str,
    now: datetime,
    extra: dict[str, Any] | None = None,
) -> PersonaCorrection | None:
    """Queue a contradiction pair unless the same pair (text, text, entity, scope) is queued already."""
    _require_atomic()
    extra = extra or {}
    key = correction_key(old_text, new_text, entity, extra)
    correction, created = PersonaCorrection.objects.get_or_create(
        character_id=character_id,
        dedup_key=key,
        defaults={
            "old_text": old_text,
            "new_text": new_text,
            "entity": entity,
            "created_at": now,
            "extra": extra,
        },
    )
    if not created:
        return None
    character_memory_changed(character_id=character_id, pool=CORRECTION_POOL, rows=[correction.pk])
    event_append(
        character_id=character_id,
        event_type="correction.queued",
        payload={
            "old_text": old_text,
            "new_text": new_text,
            "entity": entity,
            "created_at": now.isoformat(),
            "extra": extra,
        },
    )
    return correction


def entry_add(
    *,
    character: Character,
    entity: str,
    text: str,
    source: str,
    now: datetime,
    entry_id: str | None = None,
    source_id: str | None = None,
    evidence: Evidence | None = None,
    check_contradictions: bool = True,
) -> AddResult:
    """``persona.aadd_fact``: card overlap rejects, other overlap queues a correction, else adds."""
    _require_atomic()
    text = text.strip()
    held = PersonaEntry.with_subjects.filter(
        character_id=character.pk, section=entity, archive_shard_path__isnull=True, text=text
    ).first()
    if held is not None:
        return AddResult(AddOutcome.ALREADY_HELD, held)
    if check_contradictions:
        section_entries = PersonaEntry.objects.filter(
            character_id=character.pk, section=entity, archive_shard_path__isnull=True
        ).order_by("position", "pk")
        for existing in section_entries:
            if not contradicts(existing.text, text, stop_names=character.stop_names):
                continue
            if existing.protected:
                return AddResult(AddOutcome.REJECTED_CARD, existing)
            correction_enqueue(
                character_id=character.pk, old_text=existing.text, new_text=text, entity=entity, now=now
            )
            return AddResult(AddOutcome.QUEUED_CORRECTION, existing)
    section_ensure(character_id=character.pk, key=entity)
    entry = PersonaEntry(
        character_id=character.pk,
        entry_id=entry_id or _unused_entry_id(character_id=character.pk, base=manual_entry_id(text, now=now)),
        section=entity,
        position=_next_position(character_id=character.pk, section=entity),
        text=text,
        source=source,
        source_id=source_id,
        created_at=now,
    )
    if evidence is not None:
        evidence_set(entry, evidence)
    entry_save(entry, event_type="persona.fact_added")
    return AddResult(AddOutcome.ADDED, entry)


def entry_merge_into(
    *, target: PersonaEntry, text: str, other: Evidence, merged_from_id: str, now: datetime
) -> bool:
    """Rewrite ``target`` with the merged text and the larger evidence; False when already merged."""
    _require_atomic()
    if merged_from_id in target.merged_from_ids:
        return False  # the idempotency marker: this reflection went in already
    if text.strip() and text.strip() != target.text:
        target.version_history = version_pushed(
            target.version_history, text=target.text, now=now, reason="promote_merge"
        )
        target.text = text.strip()
    evidence_set(target, evidence_merged(evidence_of(target), other, now=now))
    target.sub_zero_days = 0
    target.sub_zero_last_increment_date = None
    target.merged_from_ids = [*target.merged_from_ids, merged_from_id]
    token_cache_refresh(target)
    target.save()
    entry_evidence_event(target, source="promote_merge")
    entry_event(target, "persona.entry_updated")
    character_memory_changed(character_id=target.character_id, pool=CHANGE_POOL, rows=[target.pk])
    return True


def entry_text_replace(*, entry: PersonaEntry, text: str, now: datetime, reason: str) -> None:
    """An edit in place: same id and evidence, the old text pushed into ``version_history``."""
    _require_atomic()
    if text.strip() == entry.text:
        return
    entry.version_history = version_pushed(entry.version_history, text=entry.text, now=now, reason=reason)
    entry.text = text.strip()
    entry_save(entry)


def correction_entry_add(*, character: Character, entity: str, text: str, now: datetime) -> PersonaEntry:
    result = entry_add(
        character=character,
        entity=entity,
        text=text,
        source="correction",
        now=now,
        entry_id=correction_entry_id(text, now=now),
        check_contradictions=False,
    )
    assert result.entry is not None
    return result.entry


def entry_evidence_event(entry: PersonaEntry, *, source: str) -> None:
    """The ``persona.evidence_updated`` snapshot of ``entry``'s evidence (replay sets it as it is)."""
    event_append(
        character_id=entry.character_id,
        event_type="persona.evidence_updated",
        payload={
            "entry_id": entry.entry_id,
            "reinforcement": entry.reinforcement,
            "disputation": entry.disputation,
            "rein_last_signal_at": entry.rein_last_signal_at.isoformat()
            if entry.rein_last_signal_at
            else None,
            "disp_last_signal_at": entry.disp_last_signal_at.isoformat()
            if entry.disp_last_signal_at
            else None,
            "sub_zero_days": entry.sub_zero_days,
            "source": source,
        },
    )
