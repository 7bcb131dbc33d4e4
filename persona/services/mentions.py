"""Mention suppression (reference §3.6): the companion should not keep bringing up the same thing.

After each AI reply, every non-protected persona entry and every confirmed reflection whose keywords
appear in the reply counts a mention; the third within 5 hours suppresses it for 5 hours. Pending
reflections are never suppressed. The refresh lifts suppressions whose 5 hours are over.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import chain
from typing import Any

from django.db import transaction
from django.utils import timezone

from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.characters.services import character_memory_changed
from nekomem.journal.causes import caused_by
from nekomem.journal.services import event_append
from nekomem.language.messages import message_text
from nekomem.language.tokens import keyword_set
from nekomem.timestamps import iso_local, parse_iso
from persona.models import CHANGE_POOL, PersonaEntry
from reflections.models import RECALL_POOL as REFLECTION_POOL
from reflections.models import Reflection

MENTION_WINDOW = timedelta(hours=5)
SUPPRESS_FOR = timedelta(hours=5)
MENTIONS_TO_SUPPRESS = 3


def _remove_names(text: str, names: list[str]) -> str:
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        text = text.replace(name, " ")
    return text


def mentioned(text: str, reply: str, *, stop_names: list[str]) -> bool:
    """Any keyword of ``text`` occurs in the reply (names removed from both)."""
    return any(keyword in reply for keyword in keyword_set(text, stop_names))


def _recent(mentions: list[Any], now: datetime) -> list[str]:
    kept = []
    for value in mentions:
        try:
            at = parse_iso(value)
        except ValueError:
            continue
        if at is not None and now - at < MENTION_WINDOW:
            kept.append(value)
    return kept


def _counted(item: PersonaEntry | Reflection, now: datetime) -> bool:
    """Record one mention; True when this one suppresses the item."""
    item.recent_mentions = [*_recent(item.recent_mentions, now), iso_local(now)]
    if not item.suppress and len(item.recent_mentions) >= MENTIONS_TO_SUPPRESS:
        item.suppress, item.suppressed_at = True, now
        return True
    return False


def suppression_active(item: PersonaEntry | Reflection, *, now: datetime) -> bool:
    """Read paths use this, so a lapsed suppression stops counting before the refresh writes it."""
    return bool(item.suppress) and (item.suppressed_at is None or now - item.suppressed_at < SUPPRESS_FOR)


@dataclass
class _Flipped:
    """Primary keys of the persona entries and reflections whose suppression was set or lifted."""

    entries: list[int] = field(default_factory=list)
    reflections: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.entries) + len(self.reflections)

    def log(self, *, character_id: int) -> None:
        """Bump the memory version, logged per pool: the working context re-renders, and a recall
        index (which leaves suppressed reflections out, and holds no persona entry) applies just the
        reflections instead of rebuilding."""
        if self.entries:
            character_memory_changed(character_id=character_id, pool=CHANGE_POOL, rows=self.entries)
        if self.reflections:
            character_memory_changed(character_id=character_id, pool=REFLECTION_POOL, rows=self.reflections)


def _lift_expired(*, character_id: int, now: datetime, flipped: _Flipped) -> None:
    expired = {"suppress": True, "suppressed_at__lte": now - SUPPRESS_FOR}
    for model, keys in ((PersonaEntry, flipped.entries), (Reflection, flipped.reflections)):
        stale = model.objects.filter(character_id=character_id, **expired)  # type: ignore[attr-defined]
        lifted = list(stale.values_list("pk", flat=True))
        if lifted:
            model.objects.filter(pk__in=lifted).update(  # type: ignore[attr-defined]
                suppress=False, suppressed_at=None, recent_mentions=[]
            )
        keys += lifted


def ai_reply_text(payload: dict[str, Any]) -> str:
    return "\n".join(
        message_text((m.get("data") or {}).get("content"))
        for m in payload.get("messages") or []
        if isinstance(m, dict) and m.get("type") == "ai"
    )


# Per process: the keyword sets of each character's mentionable items, for the memory version they
# were read at. Tokenising every entry and confirmed reflection on every turn was most of the step's
# CPU; every write that changes which items exist or what they say bumps the version.
_KEYWORD_CACHE_SIZE = 512
_keyword_cache: dict[int, tuple[tuple[int, tuple[str, ...]], tuple[frozenset[str], ...]]] = {}


def _mentionable_keywords(*, character_id: int, version: int, names: list[str]) -> tuple[frozenset[str], ...]:
    key = (version, tuple(names))
    cached = _keyword_cache.get(character_id)
    if cached is not None and cached[0] == key:
        return cached[1]
    texts = chain(
        PersonaEntry.objects.filter(
            character_id=character_id, protected=False, archive_shard_path__isnull=True
        ).values_list("text", flat=True),
        Reflection.objects.filter(character_id=character_id, status=Reflection.Status.CONFIRMED).values_list(
            "text", flat=True
        ),
    )
    keywords = tuple(frozenset(keyword_set(text, names)) for text in texts)
    _keyword_cache.pop(character_id, None)
    while len(_keyword_cache) >= _KEYWORD_CACHE_SIZE:
        _keyword_cache.pop(next(iter(_keyword_cache)))
    _keyword_cache[character_id] = (key, keywords)
    return keywords


def mention_keywords_forget() -> None:
    _keyword_cache.clear()


def _anything_mentioned(*, character_id: int, reply: str) -> bool:
    """A read without the character lock: most replies mention nothing, and taking the write lock
    on every turn queued the cluster behind chat turns (bench/cache_throughput.py). One query while
    the character's memory is unchanged."""
    character = (
        Character.objects.filter(pk=character_id)
        .only("memory_version", "name", "master_name", "master_nicknames")
        .first()
    )
    if character is None:
        return False
    version = character.memory_version
    names = character.stop_names
    bare_reply = _remove_names(reply, names)
    keywords = _mentionable_keywords(character_id=character_id, version=version, names=names)
    return any(keyword in bare_reply for keyword_set_ in keywords for keyword in keyword_set_)


@caused_by("mention")
def persona_mentions_record(
    *, character_id: int, reply: str, now: datetime | None = None, subject_keys: Collection[str] | None = None
) -> int:
    """Count mentions in one AI reply; returns how many items became suppressed.

    Lapsed suppressions are lifted here when something was mentioned, and by the 10-minute
    ``suppressions_refresh`` loop otherwise; read paths ignore lapsed ones either way. With
    ``subject_keys`` (a group reply, ``scoped_mentions``), only those subjects' entries and reflections
    count, never the master's.
    """
    now = now or timezone.now()
    if not reply.strip():
        return 0
    if subject_keys is None and not _anything_mentioned(character_id=character_id, reply=reply):
        return 0
    keys = list(subject_keys) if subject_keys is not None else None
    suppressed = 0
    flipped = _Flipped()
    with transaction.atomic():
        character = lock_character(character_id)
        _lift_expired(character_id=character_id, now=now, flipped=flipped)
        names = character.stop_names
        bare_reply = _remove_names(reply, names)
        entry_rows = (
            PersonaEntry.objects if keys is None else PersonaEntry.with_subjects.filter(subject_key__in=keys)
        )
        entries = entry_rows.filter(
            character_id=character_id, protected=False, archive_shard_path__isnull=True
        )
        for entry in entries:
            if not mentioned(entry.text, bare_reply, stop_names=names):
                continue
            newly = _counted(entry, now)
            entry.save(update_fields=["recent_mentions", "suppress", "suppressed_at", "updated_at"])
            event_append(
                character_id=character_id,
                event_type="persona.suppressed" if newly else "persona.fact_mentioned",
                payload={"entry_id": entry.entry_id, "ts": now.isoformat(), "suppress": entry.suppress},
            )
            suppressed += newly
            if newly:
                flipped.entries.append(entry.pk)
        reflection_rows = (
            Reflection.objects if keys is None else Reflection.with_subjects.filter(subject_key__in=keys)
        )
        for reflection in reflection_rows.filter(
            character_id=character_id, status=Reflection.Status.CONFIRMED
        ):
            if mentioned(reflection.text, bare_reply, stop_names=names):
                newly = _counted(reflection, now)
                reflection.save(update_fields=["recent_mentions", "suppress", "suppressed_at", "updated_at"])
                suppressed += newly
                if newly:
                    flipped.reflections.append(reflection.pk)
        flipped.log(character_id=character_id)
    return suppressed


@caused_by("mention")
def suppressions_refresh(*, character_id: int, now: datetime | None = None) -> int:
    """Lift suppressions older than 5 hours (persona entries and reflections); returns how many."""
    now = now or timezone.now()
    with transaction.atomic():
        lock_character(character_id)
        lifted = _Flipped()
        _lift_expired(character_id=character_id, now=now, flipped=lifted)
        lifted.log(character_id=character_id)
    return len(lifted)
