"""The recent window's memo as the kernel's history sees it (issue 49): one row per character, the
leading ``system`` message that compression writes, versioned on every change and put back by undo,
restore and rollback. The window's other messages are the conversation itself, not memory a machine
rewrites: they have no history here (the raw log is the user's record and is never rolled back).

A memo's version is ``{"text": …}``; its row id is ``memo`` and its primary key the character's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import Min

from nekomem.characters.services import character_memory_changed
from nekomem.journal.registry import HistoryLayer
from recent.models import RecentMessage

MEMO_POOL = "recent_memo"  # how memory-change log rows name a character's memo (by the character's pk)
MEMO_ROW = "memo"


def _memo_row(character_id: int) -> RecentMessage | None:
    first = RecentMessage.objects.filter(character_id=character_id).order_by("position").first()
    return first if first is not None and first.type == RecentMessage.Kind.SYSTEM else None


def memo_text(character_id: int) -> str | None:
    """The memo's text, or None when the window starts without one."""
    row = _memo_row(character_id)
    if row is None:
        return None
    content = (row.data or {}).get("content")
    return content if isinstance(content, str) else str(content or "")


def memo_changed(*, character_id: int, before: str | None) -> None:
    """Inside the caller's write transaction: version the memo if it is not what it was (``before``)."""
    if memo_text(character_id) != before:
        character_memory_changed(character_id=character_id, pool=MEMO_POOL, rows=[character_id])


def memo_snapshots(character_id: int, pks: Sequence[int]) -> dict[int, tuple[str, dict[str, Any]]]:
    text = memo_text(character_id) if character_id in pks else None
    return {} if text is None else {character_id: (MEMO_ROW, {"text": text})}


def memo_current(character_id: int) -> dict[str, tuple[int, dict[str, Any]]]:
    text = memo_text(character_id)
    return {} if text is None else {MEMO_ROW: (character_id, {"text": text})}


def memo_version_restore(character_id: int, pk: int, fields: dict[str, Any]) -> None:
    """Make the window start with a memo holding ``fields``' text again; the caller holds the lock."""
    from recent.compression import memo_data

    text = str(fields.get("text") or "")
    row = _memo_row(character_id)
    if row is not None:
        row.data = {**row.data, "content": text}
        row.save(update_fields=["data"])
    else:
        first = RecentMessage.objects.filter(character_id=character_id).aggregate(m=Min("position"))["m"]
        RecentMessage.objects.create(
            character_id=character_id,
            position=(first - 1) if first is not None else 0,
            type=RecentMessage.Kind.SYSTEM,
            data=memo_data(text),
        )
    character_memory_changed(character_id=character_id, pool=MEMO_POOL, rows=[character_id])


def memo_version_archive(character_id: int, row_id: str) -> None:
    """A memo an undo or a rollback unmakes leaves the window; its history keeps it to put back."""
    row = _memo_row(character_id)
    if row is not None:
        row.delete()
        character_memory_changed(character_id=character_id, pool=MEMO_POOL, rows=[character_id])


MEMO_HISTORY = HistoryLayer(
    name="recent_memo",
    pool=MEMO_POOL,
    snapshots=memo_snapshots,
    current=memo_current,
    restore=memo_version_restore,
    archive=memo_version_archive,
    subject_of=lambda fields: "",
    row_key=lambda character_id, row_id: character_id,
)
