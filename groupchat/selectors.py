"""Reads for group chat: the subjects of a character with their rows per layer (the browser's filter
and ``scoped_subjects``) and the forget tombstones (``forget_epochs``)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count

from facts.selectors import fact_subject_counts
from groupchat.models import ScopedWriteKey, SubjectForgetEpoch, SubjectRecord
from nekomem.browser.subjects import BrowserSubject
from persona.selectors import persona_subject_counts
from reflections.models import Reflection


def _reflection_subject_counts(character_id: int) -> dict[str, int]:
    return dict(
        Reflection.with_subjects.filter(character_id=character_id)
        .exclude(subject_key="")
        .values_list("subject_key")
        .annotate(n=Count("pk"))
    )


def subjects_browse(character_id: int) -> list[BrowserSubject]:
    """Every subject of the character (any platform) with its rows per layer, for the browser's filter;
    sorted by kind, then key."""
    facts = fact_subject_counts(character_id=character_id)
    persona = persona_subject_counts(character_id=character_id)
    reflections = _reflection_subject_counts(character_id)
    records = {r.subject_key: r for r in SubjectRecord.objects.filter(character_id=character_id)}
    subjects = []
    for key in {*facts, *persona, *reflections, *records}:
        kind, _, subject_id = key.partition(":")
        record = records.get(key)
        fact_counts = facts.get(key, {"active": 0, "archived": 0})
        persona_counts = persona.get(key, {"entries": 0, "corrections": 0})
        subjects.append(
            BrowserSubject(
                key=key,
                kind=kind,
                subject_id=subject_id,
                scope=record.scope if record is not None else key,
                display_name=record.display_name if record is not None and record.display_name else None,
                facts=fact_counts["active"] + fact_counts["archived"],
                reflections=reflections.get(key, 0),
                persona=persona_counts["entries"],
                corrections=persona_counts["corrections"],
            )
        )
    subjects.sort(key=lambda s: (s.kind, s.key))
    return subjects


def scoped_subjects_list(*, character_id: int, platform: str) -> list[dict[str, Any]]:
    """``scoped_subjects`` rows (reference §1.6) of one platform, sorted by kind, key and scope."""
    facts = fact_subject_counts(character_id=character_id)
    persona = persona_subject_counts(character_id=character_id)
    reflections = _reflection_subject_counts(character_id)
    records = {r.subject_key: r for r in SubjectRecord.objects.filter(character_id=character_id)}
    staged = "".join(
        ScopedWriteKey.objects.filter(
            character_id=character_id, status=ScopedWriteKey.Status.PENDING
        ).values_list("subject_keys", flat=True)
    )
    rows = []
    for key in {*facts, *persona, *reflections, *records}:
        kind, _, subject_id = key.partition(":")
        if subject_id.split(":", 1)[0] != platform:
            continue
        record = records.get(key)
        fact_counts = facts.get(key, {"active": 0, "archived": 0, "last": None})
        persona_counts = persona.get(key, {"entries": 0, "sections": 0, "corrections": 0})
        last = max((t for t in (fact_counts["last"], record and record.last_write_at) if t), default=None)
        rows.append(
            {
                "subject_kind": kind,
                "subject_id": subject_id,
                "scope": record.scope if record is not None else key,
                "display_name": record.display_name if record is not None and record.display_name else None,
                "facts": fact_counts["active"] + fact_counts["archived"],
                "reflections": reflections.get(key, 0),
                "persona": bool(persona_counts["entries"] or persona_counts["sections"]),
                "prompt_locale": bool(record is not None and record.prompt_locale),
                "corrections": persona_counts["corrections"],
                "staged": f"\n{key}\n" in staged,
                "last_write_at": last.isoformat() if last else None,
                "archived": fact_counts["archived"] > 0 and fact_counts["active"] == 0,
            }
        )
    rows.sort(key=lambda r: (r["subject_kind"], f"{r['subject_kind']}:{r['subject_id']}", r["scope"]))
    return rows


def forget_epochs_read(*, character_id: int | None, subject_keys: list[str]) -> dict[str, int]:
    """The tombstones of these subject keys; keys never forgotten with an epoch are absent."""
    if character_id is None:
        return {}
    rows = SubjectForgetEpoch.objects.filter(
        character_id=character_id, subject_key__in=subject_keys, epoch__isnull=False
    )
    return {key: epoch for key, epoch in rows.values_list("subject_key", "epoch") if epoch is not None}
