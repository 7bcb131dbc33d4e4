"""Resolution of the ``persona_corrections`` queue (reference §3.6; powerful memory ON only).

Up to 10 pairs per batch, all from one isolation domain (the private chat, or one group scope), so a
model never sees two domains at once. A pair whose answer is missing or invalid counts one attempt;
after 5 it is dropped from the queue (dead-lettered, with a warning) but kept, marked ``dropped_at``,
so the memory browser and the REST API show it until a person resolves it by hand.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from nekomem.characters.language import character_language
from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.characters.services import character_memory_changed
from nekomem.errors import Conflict
from nekomem.journal.causes import caused_by
from nekomem.journal.jobs import (
    job_fail,
    job_start,
    job_succeed,
    job_supersede,
    job_wait_for_provider,
    register_job_kind,
)
from nekomem.journal.services import event_append
from nekomem.llm import LLMError, LLMUnavailable, chat_json
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_enabled
from persona.models import CHANGE_POOL, CORRECTION_POOL, PersonaCorrection, PersonaEntry
from persona.prompts import correction_line, corrections_messages
from persona.services.entries import (
    correction_entry_add,
    entry_event,
    entry_text_replace,
    persona_prepare,
)

logger = logging.getLogger(__name__)

BATCH_SIZE = 10
MAX_RESOLVE_ATTEMPTS = 5
CORRECTIONS_JOB = "persona.corrections"


def _batch_key(pks: list[int]) -> str:
    return hashlib.sha256(",".join(map(str, sorted(pks))).encode()).hexdigest()[:32]


def register_jobs() -> None:
    register_job_kind(CORRECTIONS_JOB, handler=None, tier="correction")


CORRECTION_TIMEOUT = 110
RESOLUTIONS = ("merge", "keep_new", "keep_old", "keep_both")


@dataclass(frozen=True)
class CorrectionsReport:
    resolved: int = 0
    failed: int = 0
    dropped: int = 0
    reason: str = ""


def isolation_domain(correction: PersonaCorrection) -> str:
    extra = correction.extra or {}
    return str(extra.get("scope") or extra.get("subject_id") or "")


def _batch(*, character_id: int) -> list[PersonaCorrection]:
    queued = list(
        PersonaCorrection.objects.filter(character_id=character_id, dropped_at__isnull=True).order_by("pk")
    )
    if not queued:
        return []
    domain = isolation_domain(queued[0])
    return [c for c in queued if isolation_domain(c) == domain][:BATCH_SIZE]


def _trust(extra: dict[str, Any], side: str) -> str:
    return str(extra.get(f"{side}_speaker_trust") or "user")


def _line(index: int, correction: PersonaCorrection, language: str) -> str:
    extra = correction.extra or {}
    return correction_line(
        index=index,
        old_text=correction.old_text,
        old_trust=_trust(extra, "old"),
        new_text=correction.new_text,
        new_trust=_trust(extra, "new"),
        language=language,
    )


def _verdicts(reply: Any, size: int) -> dict[int, tuple[str, str]]:
    verdicts: dict[int, tuple[str, str]] = {}
    for item in reply if isinstance(reply, list) else []:
        if not isinstance(item, dict):
            continue
        index, action, text = item.get("index"), item.get("action"), item.get("text")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < size:
            continue
        if action not in RESOLUTIONS:
            continue
        if action != "keep_old" and (not isinstance(text, str) or not text.strip()):
            continue
        verdicts.setdefault(index, (action, text if isinstance(text, str) else ""))
    return verdicts


def _live_entry(*, character_id: int, correction: PersonaCorrection) -> PersonaEntry | None:
    return PersonaEntry.objects.filter(
        character_id=character_id,
        section=correction.entity,
        text=correction.old_text,
        archive_shard_path__isnull=True,
    ).first()


def correction_apply(
    *, character: Character, correction: PersonaCorrection, action: str, text: str, now: datetime
) -> PersonaEntry | None:
    """One resolution, inside the caller's locked transaction; the correction leaves the queue.

    Returns the entry that now holds the resolved text (None for ``keep_old``, which adds nothing).
    """
    entry = _live_entry(character_id=character.pk, correction=correction)
    result: PersonaEntry | None = None
    if action == "merge" and entry is not None:
        entry_text_replace(entry=entry, text=text, now=now, reason="correction_merge")
        result = entry
    elif action == "keep_new":
        if entry is not None and not entry.protected:
            entry_event(entry, "persona.entry_updated", removed=True, reason="keep_new")
            removed = entry.pk
            entry.delete()
            # Reported like every other write of an entry: its history keeps the deletion, so an undo
            # of the resolution brings the replaced entry back.
            character_memory_changed(character_id=character.pk, pool=CHANGE_POOL, rows=[removed])
        result = correction_entry_add(character=character, entity=correction.entity, text=text, now=now)
    elif action == "keep_both" or (action == "merge" and entry is None):
        result = correction_entry_add(character=character, entity=correction.entity, text=text, now=now)
    event_append(
        character_id=character.pk,
        event_type="correction.resolved",
        payload={
            "old_text": correction.old_text,
            "new_text": correction.new_text,
            "entity": correction.entity,
            "action": action,
            "text": text,
            "extra": correction.extra,
            "ts": now.isoformat(),
        },
    )
    removed_pair = correction.pk
    correction.delete()
    character_memory_changed(character_id=character.pk, pool=CORRECTION_POOL, rows=[removed_pair])
    return result


def _count_failures(*, character_id: int, pks: list[int], now: datetime) -> int:
    """One more attempt for each; returns how many reached the limit and were dropped (kept, marked)."""
    PersonaCorrection.objects.filter(character_id=character_id, pk__in=pks).update(
        resolve_attempts=F("resolve_attempts") + 1
    )
    dropped = PersonaCorrection.objects.filter(
        character_id=character_id,
        pk__in=pks,
        resolve_attempts__gte=MAX_RESOLVE_ATTEMPTS,
        dropped_at__isnull=True,
    ).update(dropped_at=now)
    character_memory_changed(character_id=character_id, pool=CORRECTION_POOL, rows=pks)
    if dropped:
        logger.warning("persona corrections dead-lettered character=%s count=%d", character_id, dropped)
    return dropped


@caused_by("correction")
def persona_corrections_resolve(*, character_id: int, now: datetime | None = None) -> CorrectionsReport:
    """One batch of the queue through the correction tier."""
    now = now or timezone.now()
    if not switch_enabled(POWERFUL_MEMORY):
        return CorrectionsReport(reason="powerful memory off")
    batch = _batch(character_id=character_id)
    if not batch:
        return CorrectionsReport(reason="empty")
    character = Character.objects.get(pk=character_id)
    language = character_language(character)
    messages = corrections_messages(
        name=character.name, lines=[_line(i, c, language) for i, c in enumerate(batch)], language=language
    )
    pks = [c.pk for c in batch]
    # The batch's call retries as a kernel job keyed on the corrections it holds: back-off between
    # failures, and waiting (no attempt spent) while the correction tier has no provider. Each
    # correction also counts its own failed attempts, the original's ``resolve_attempts`` (5 →
    # dropped), which travels in persona_corrections.json.
    job_supersede(character_id=character_id, kind=CORRECTIONS_JOB, key=_batch_key(pks))
    job, why = job_start(character_id=character_id, kind=CORRECTIONS_JOB, key=_batch_key(pks), now=now)
    if job is None:
        return CorrectionsReport(reason=f"waiting: {why}")
    try:
        reply = chat_json(
            tier="correction",
            messages=messages,
            expect=list,
            thinking=True,
            timeout=CORRECTION_TIMEOUT,
            max_attempts=1,
        )
    except LLMUnavailable as exc:
        job_wait_for_provider(job=job, tier="correction")
        return CorrectionsReport(reason=f"waiting: {exc.reason}")
    except LLMError as exc:
        with transaction.atomic():
            lock_character(character_id)
            dropped = _count_failures(character_id=character_id, pks=pks, now=now)
        job_fail(job=job, error=exc, now=now)
        return CorrectionsReport(failed=len(pks), dropped=dropped, reason="llm failed")
    job_succeed(job=job, outcome="answered")
    verdicts = _verdicts(reply, len(batch))
    resolved = 0
    with transaction.atomic():
        character = lock_character(character_id)
        persona_prepare(character=character, now=now)
        for index, correction in enumerate(batch):
            if index not in verdicts or not PersonaCorrection.objects.filter(pk=correction.pk).exists():
                continue
            action, text = verdicts[index]
            correction_apply(character=character, correction=correction, action=action, text=text, now=now)
            resolved += 1
        unanswered = [c.pk for i, c in enumerate(batch) if i not in verdicts]
        dropped = _count_failures(character_id=character_id, pks=unanswered, now=now) if unanswered else 0
    logger.info(
        "persona corrections character=%s resolved=%d failed=%d", character_id, resolved, len(unanswered)
    )
    return CorrectionsReport(resolved=resolved, failed=len(unanswered), dropped=dropped)


@caused_by("correction")
def persona_correction_resolve(
    *, character_id: int, correction_pk: int, action: str, text: str = "", now: datetime | None = None
) -> PersonaEntry | None:
    """A resolution by hand (REST, admin, memory browser); returns the entry holding the result. A pair
    the resolver dropped after 5 attempts is resolved the same way.

    ``text`` is the merged or kept text (blank: the new observation's). A card entry changes only with
    the card, so merging into one or replacing one by hand is refused with nothing written; keep_old and
    keep_both leave it as it is and stay allowed.
    """
    now = now or timezone.now()
    if action not in RESOLUTIONS:
        raise ValueError(f"action must be one of {RESOLUTIONS}")
    with transaction.atomic():
        character = lock_character(character_id)
        correction = PersonaCorrection.objects.filter(character_id=character_id, pk=correction_pk).first()
        if correction is None:
            raise Conflict("the correction is no longer queued")
        if action in ("merge", "keep_new"):
            entry = _live_entry(character_id=character_id, correction=correction)
            if entry is not None and entry.protected:
                raise Conflict("character-card entries change with the card, not by hand")
        if action != "keep_old" and not text.strip():
            text = correction.new_text
        return correction_apply(character=character, correction=correction, action=action, text=text, now=now)
