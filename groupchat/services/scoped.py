"""Group chat (reference §1.6): the scoped routes' compositions over every layer's subject rows.

Each layer stores and forgets its own subject rows (``facts_scoped_store``, ``*_subject_forget``);
group chat composes what spans layers: the context of a group reply, mentions, forgetting a subject
with its tombstone, and the subject registry (locale, display name, last write).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from facts.services import ScopedFact, ScopedStored, facts_scoped_store, facts_subject_forget
from groupchat.identity.selectors import linked_accounts
from groupchat.identity.trust import normalize_account_id
from groupchat.models import ScopedWriteKey, SubjectForgetEpoch, SubjectRecord
from nekomem.characters.language import character_language
from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.characters.services import character_memory_forgotten, memory_forgotten_apply
from nekomem.language.codes import supported_language
from nekomem.language.counting import count_tokens
from nekomem.subjects import Subject
from persona.selectors import (
    PERSONA_TOKENS,
    persona_entries_of_subjects,
    persona_subject_sections,
    scoped_section_header,
)
from persona.services import persona_mentions_record, persona_subject_display_name_set, persona_subject_forget
from reflections.models import Reflection
from reflections.selectors import reflections_of_subjects
from reflections.services import reflections_subject_forget

# One budget for the whole group context, spent in the order of ``subjects``: the group first, then
# the members the caller ranked, so a long-known member cannot crowd out the group itself.
SCOPED_CONTEXT_TOKENS = PERSONA_TOKENS
KEYS_KEPT_DAYS = 365
_CONTEXT_STATUSES = (Reflection.Status.PENDING, Reflection.Status.CONFIRMED, Reflection.Status.PROMOTED)


def subject_record_touch(
    *, character_id: int, subject: Subject, display_name: str | None = None, language: str | None = None
) -> None:
    """Note a scoped write: a supported ``language`` becomes the subject's durable prompt locale."""
    now = timezone.now()
    locale = supported_language(language)
    with transaction.atomic():
        lock_character(character_id)
        record, created = SubjectRecord.objects.get_or_create(
            character_id=character_id,
            subject_key=subject.key,
            scope=subject.scope,
            defaults={
                "subject_kind": subject.kind,
                "subject_id": subject.subject_id,
                "display_name": display_name or "",
                "prompt_locale": locale or "",
                "last_write_at": now,
            },
        )
        if not created:
            record.display_name = display_name or record.display_name
            record.prompt_locale = locale or record.prompt_locale
            record.last_write_at = now
            record.save(update_fields=["display_name", "prompt_locale", "last_write_at"])
    if display_name:
        persona_subject_display_name_set(
            character_id=character_id, subject=subject, display_name=display_name
        )


def scoped_facts_write(
    *,
    character_id: int,
    subject: Subject,
    facts: list[ScopedFact],
    display_name: str | None,
    language: str | None,
) -> ScopedStored:
    """``scoped_facts``: the caller's own facts about a subject, stored as they are, and the subject noted."""
    stored = facts_scoped_store(character_id=character_id, subject=subject, facts=facts)
    subject_record_touch(
        character_id=character_id, subject=subject, display_name=display_name, language=language
    )
    return stored


def _context_language(*, character: Character, subjects: list[Subject], language: str | None) -> str:
    if supported_language(language):
        return character_language(character, request_language=language)
    first = (
        SubjectRecord.objects.filter(character_id=character.pk, subject_key=subjects[0].key)
        .exclude(prompt_locale="")
        .values_list("prompt_locale", flat=True)
        .first()
    )
    return character_language(character, request_language=first)


def scoped_context_render(
    *, character: Character | None, subjects: list[Subject], language: str | None
) -> str:
    """Persona and reflection sections of exactly these subjects, budgeted in their order (text/plain)."""
    if character is None:
        return ""
    lang = _context_language(character=character, subjects=subjects, language=language)
    keys = [s.key for s in subjects]
    sections = persona_subject_sections(character_id=character.pk, subject_keys=keys)
    texts: dict[str, list[str]] = {key: [] for key in keys}
    for entry in persona_entries_of_subjects(character_id=character.pk, subject_keys=keys):
        texts[entry.subject_key].append(entry.text)
    for reflection in reflections_of_subjects(character_id=character.pk, subject_keys=keys).filter(
        status__in=_CONTEXT_STATUSES
    ):
        # A promoted reflection's text is in the subject's section already: shown once.
        if reflection.text not in texts[reflection.subject_key]:
            texts[reflection.subject_key].append(reflection.text)
    budget = SCOPED_CONTEXT_TOKENS
    blocks: list[str] = []
    for subject in subjects:
        lines: list[str] = []
        for text in texts.pop(subject.key, []):
            cost = count_tokens(text)
            if cost > budget:
                budget = 0
                break
            budget -= cost
            lines.append(f"- {text}")
        if lines:
            section = sections.get(subject.key)
            name = (section.extra or {}).get("display_name") if section is not None else None
            header = scoped_section_header(language=lang, subject=str(name or subject.key))
            blocks.append("\n".join([header, *lines]))
        if budget <= 0:
            break
    return "\n\n".join(blocks)


def scoped_mentions_record(*, character_id: int, response_text: str, subjects: list[Subject]) -> bool:
    """Count a group reply's mentions against these subjects only; False when the text is blank."""
    if not response_text.strip():
        return False
    persona_mentions_record(
        character_id=character_id, reply=response_text, subject_keys=[s.key for s in subjects]
    )
    return True


@dataclass
class Forgotten:
    subject: Subject
    duplicate: bool = False
    forgotten_subjects: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


class ForgetEpochScope(ValueError):
    """``forget_epoch`` with a non-default scope (a 422)."""


def linked_subject_keys(subject: Subject) -> list[str]:
    """The same person's subjects under their other linked accounts on the same platform (never
    another platform's): ``participant:<account>``, or ``group_participant:<group>:<actor>`` in the
    same group. A group has no linked accounts."""
    if subject.kind == "participant":
        account_id = normalize_account_id(subject.subject_id)
        return [f"participant:{a}" for a in linked_accounts(account_id=account_id)] if account_id else []
    if subject.kind == "group_participant":
        platform, _, rest = subject.subject_id.partition(":")
        group, _, actor = rest.rpartition(":")
        account_id = normalize_account_id(f"{platform}:{actor}") if group else None
        if account_id is None:
            return []
        return [
            f"group_participant:{platform}:{group}:{a.split(':', 1)[1]}"
            for a in linked_accounts(account_id=account_id)
        ]
    return []


def scoped_forget(
    *, character_id: int, subject: Subject, forget_epoch: int | None = None, now: datetime | None = None
) -> Forgotten:
    """Erase one subject everywhere; idempotent. With an epoch, the tombstone is recorded first and a
    repeated (or older) epoch answers ``duplicate`` without touching anything."""
    if forget_epoch is not None and not subject.default_scope:
        raise ForgetEpochScope("forget_epoch needs the subject's default scope")
    now = now or timezone.now()
    linked = linked_subject_keys(subject)
    keys = [subject.key, *linked]
    # One transaction: the tombstone never commits without the erasure it stands for, so a retry after
    # a failure finds no tombstone and erases again.
    with transaction.atomic():
        lock_character(character_id)
        tomb = SubjectForgetEpoch.objects.filter(character_id=character_id, subject_key=subject.key).first()
        if (
            forget_epoch is not None
            and tomb is not None
            and tomb.epoch is not None
            and tomb.epoch >= forget_epoch
        ):
            return Forgotten(subject=subject, duplicate=True, forgotten_subjects=keys)
        if tomb is None:
            tomb = SubjectForgetEpoch(character_id=character_id, subject_key=subject.key)
        tomb.epoch = forget_epoch if forget_epoch is not None else tomb.epoch
        tomb.generation += 1
        tomb.forgotten_at = now
        tomb.save()
        for key in linked:  # the linked accounts' unkeyed writes in flight are dropped too
            other, _ = SubjectForgetEpoch.objects.get_or_create(
                character_id=character_id, subject_key=key, defaults={"forgotten_at": now}
            )
            other.generation += 1
            other.forgotten_at = now
            other.save()
        counts = dict(facts_subject_forget(character_id=character_id, subject_keys=keys))
        counts["reflections"] = reflections_subject_forget(character_id=character_id, subject_keys=keys)
        counts.update(persona_subject_forget(character_id=character_id, subject_keys=keys))
        # A staged (pending) keyed write about the subject goes too; its retry meets the tombstone.
        counts["staged"] = sum(
            ScopedWriteKey.objects.filter(
                character_id=character_id,
                status=ScopedWriteKey.Status.PENDING,
                subject_keys__contains=subject_keys_text([key]),
            ).delete()[0]
            for key in keys
        )
        # A finished keyed write keeps its answer (ids and counts) for a retry, not what the model
        # extracted: that is the subject's text.
        for key in keys:
            ScopedWriteKey.objects.filter(
                character_id=character_id,
                status=ScopedWriteKey.Status.DONE,
                subject_keys__contains=subject_keys_text([key]),
            ).update(generated=None, trust=None)
        counts["prompt_locale"] = (
            SubjectRecord.objects.filter(character_id=character_id, subject_key__in=keys)
            .exclude(prompt_locale="")
            .count()
        )
        SubjectRecord.objects.filter(character_id=character_id, subject_key__in=keys).delete()
        removed = {name: count for name, count in counts.items() if isinstance(count, int) and count}
        counts["linked_accounts"] = len(linked)
        if removed:
            character_memory_forgotten(character_id=character_id)
    if removed:
        # As every other deletion: this process's recall index and saved snapshots lose the subject's
        # texts before the answer (other workers apply the change log at their next query).
        memory_forgotten_apply(character_id=character_id, rows=removed)
    return Forgotten(subject=subject, forgotten_subjects=keys, counts=counts)


# --- keyed retries (reference §1.6) ------------------------------------------------------------------------


class KeyReused(ValueError):
    """The same ``idempotency_key`` with a different request (a 422)."""


def subject_keys_text(keys: list[str]) -> str:
    """Keys stored so that ``__contains="\n<key>\n"`` finds exactly one subject on every database."""
    return "\n" + "\n".join(keys) + "\n" if keys else ""


def scoped_write_key_begin(
    *, character_id: int, key: str, fingerprint: str, subject_keys: list[str] | None = None
) -> ScopedWriteKey:
    """The key's row, created pending on first use; raises KeyReused when the fingerprint differs."""
    with transaction.atomic():
        lock_character(character_id)
        row, _ = ScopedWriteKey.objects.get_or_create(
            character_id=character_id,
            key=key,
            defaults={
                "fingerprint": fingerprint,
                "created_at": timezone.now(),
                "subject_keys": subject_keys_text(subject_keys or []),
            },
        )
    if row.fingerprint != fingerprint:
        raise KeyReused("idempotency_key was used for a different request")
    return row


def scoped_write_key_journal(
    *,
    row: ScopedWriteKey,
    generated: list[list[dict[str, Any]]],
    trust: list[dict[str, Any] | None] | None = None,
) -> None:
    """Journal what the model extracted, and the trust write that goes with it, before anything is
    applied: a retry of the pending key resumes from here (the trust write included)."""
    ScopedWriteKey.objects.filter(pk=row.pk, generated__isnull=True).update(generated=generated, trust=trust)
    row.refresh_from_db(fields=["generated", "trust"])


def scoped_write_key_finish(*, row: ScopedWriteKey, answer: dict[str, Any]) -> None:
    ScopedWriteKey.objects.filter(pk=row.pk).update(status=ScopedWriteKey.Status.DONE, answer=answer)


def scoped_write_is_stale(*, character_id: int, subject_key: str, epoch: int) -> bool:
    """A keyed write whose epoch for the subject is below its forget tombstone is dropped."""
    tomb = (
        SubjectForgetEpoch.objects.filter(character_id=character_id, subject_key=subject_key)
        .values_list("epoch", flat=True)
        .first()
    )
    return tomb is not None and epoch < tomb


def subject_forget_generation(*, character_id: int, subject_key: str) -> int:
    """How many times the subject was forgotten: read before an extraction, compared before its write."""
    row = (
        SubjectForgetEpoch.objects.filter(character_id=character_id, subject_key=subject_key)
        .values_list("generation", flat=True)
        .first()
    )
    return row or 0


def scoped_write_keys_prune(*, now: datetime | None = None) -> int:
    """Keys are kept for a year."""
    cutoff = (now or timezone.now()) - timedelta(days=KEYS_KEPT_DAYS)
    return ScopedWriteKey.objects.filter(created_at__lt=cutoff).delete()[0]
