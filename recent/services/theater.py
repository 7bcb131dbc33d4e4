"""Theater (interactive story) capsules: archive, retract and forget (reference §1.7, §2.1).

A current main server archives a story episode by posting ``/cache`` with exactly one ``system``
message whose ``data.metadata`` says ``source: theater_numeric_v2`` and ``memory_tier:
episode_summary``. The capsule is kept beside the recent window (``TheaterCapsule``): one per
(story, session), replaced by a later ``archive_through_revision``, deduplicated by the request's
``idempotency_key``. It never enters the window, the raw log or the post-turn op, so compression
never summarises it and nothing extracts facts or reflections from story fiction.

Retract and forget leave tombstones (``TheaterTombstone``) that a capsule write still in flight is
checked against under the same lock, so a late write cannot bring a removed capsule back; it is
answered ``{"status": "retracted", "count": 0}``.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from django.db.models import Q
from django.utils import timezone

from nekomem.characters.language import language_choice_update
from nekomem.characters.locks import lock_character_update, settled_transaction
from nekomem.characters.services import character_id_for, database_files_scrub
from nekomem.language.messages import message_text
from recent.models import TheaterCapsule, TheaterTombstone

THEATER_SOURCE = "theater_numeric_v2"
EPISODE_TIER = "episode_summary"
MAX_IDEMPOTENCY_KEY = 160
MAX_FORGET_MARKER = 128
IDENTITY_REQUIRED = "theater_episode_identity_required"
MAX_ID_CHARS = 256
MAX_TITLE_CHARS = 200


class TheaterRequestError(ValueError):
    """A capsule request the original refuses; ``str(exc)`` is its exact error string."""


def theater_metadata(message: dict[str, Any]) -> dict[str, Any] | None:
    metadata = message.get("data", {}).get("metadata")
    return metadata if isinstance(metadata, dict) else None


def is_theater_episode(messages: list[dict[str, Any]]) -> bool:
    """The batch is one capsule: exactly one ``system`` message marked as an episode summary."""
    if len(messages) != 1 or messages[0]["type"] != "system":
        return False
    metadata = theater_metadata(messages[0])
    return (
        metadata is not None
        and metadata.get("source") == THEATER_SOURCE
        and metadata.get("memory_tier") == EPISODE_TIER
    )


def _revision(value: object, *, field: str) -> int:
    if isinstance(value, bool):
        raise TheaterRequestError(f"{field}_invalid")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise TheaterRequestError(f"{field}_invalid")


def _optional_int(value: object, *, field: str) -> int | None:
    return None if value is None or value == "" else _revision(value, field=field)


def _identifier(value: object, *, field: str, blank: str | None = None) -> str:
    """A story or session id, trimmed (the original strips them before matching). ``blank`` is the
    error a management route answers for an id that is only whitespace."""
    if not isinstance(value, str) or len(value) > MAX_ID_CHARS:
        raise TheaterRequestError(f"{field}_invalid")
    if not value.strip():
        raise TheaterRequestError(blank or f"{field}_invalid")
    return value.strip()


def _count(value: object, *, field: str) -> int:
    """A revision or attempt a management route takes: an integer ≥ 0."""
    number = _revision(value, field=field)
    if number < 0:
        raise TheaterRequestError(f"{field}_invalid")
    return number


@dataclass(frozen=True)
class CapsuleOptions:
    """The ``/cache`` body fields only a capsule may carry."""

    idempotency_key: str
    archive_attempt: int | None
    forget_marker: str


def capsule_options(body: dict[str, Any], *, episode: bool) -> CapsuleOptions:
    """Validate the capsule fields of a ``/cache`` body (error strings as the original's)."""
    key = body.get("idempotency_key")
    if key is not None and not isinstance(key, str):
        raise TheaterRequestError("idempotency_key_invalid")
    if key and not episode:
        raise TheaterRequestError("idempotency_key_requires_theater_episode")
    if key and len(key) > MAX_IDEMPOTENCY_KEY:
        raise TheaterRequestError("idempotency_key_too_long")
    marker = body.get("theater_forget_marker")
    if marker is not None and not isinstance(marker, str):
        raise TheaterRequestError("theater_forget_marker_invalid")
    if marker and len(marker) > MAX_FORGET_MARKER:
        raise TheaterRequestError("theater_forget_marker_too_long")
    attempt = _optional_int(body.get("theater_archive_attempt"), field="theater_archive_attempt")
    return CapsuleOptions(idempotency_key=key or "", archive_attempt=attempt, forget_marker=marker or "")


def _dropped_by_tombstone(
    *, character_id: int, story_id: str, session_id: str, revision: int, options: CapsuleOptions
) -> bool:
    tombstones = TheaterTombstone.objects.filter(character_id=character_id, story_id=story_id)
    forget = tombstones.filter(kind=TheaterTombstone.Kind.FORGET).order_by("-id").first()
    if forget is not None and options.forget_marker != forget.forget_marker:
        return True  # written for the story as it was before it was forgotten
    for retraction in tombstones.filter(kind=TheaterTombstone.Kind.RETRACT, session_id=session_id):
        if (
            retraction.archive_through_revision is not None
            and revision <= retraction.archive_through_revision
        ):
            return True
        if (
            retraction.archive_request_id
            and options.idempotency_key == retraction.archive_request_id
            and (
                retraction.archive_attempt is None
                or options.archive_attempt is None
                or options.archive_attempt <= retraction.archive_attempt
            )
        ):
            return True
    return False


def theater_capsule_record(
    *,
    name: str,
    message: dict[str, Any],
    options: CapsuleOptions,
    language: str | None,
    language_order: int,
) -> str:
    """Upsert the session's capsule; returns ``"cached"``, or ``"retracted"`` when a retraction or
    a forget already removed what this write would bring back. Raises ``TheaterRequestError``."""
    metadata = theater_metadata(message) or {}
    story_id = _identifier(metadata.get("story_id"), field="story_id")
    session_id = _identifier(metadata.get("session_id"), field="session_id")
    revision = _revision(metadata.get("archive_through_revision", 0), field="archive_through_revision")
    title = metadata.get("story_title") or metadata.get("title") or ""
    summary = message_text(message["data"].get("content")) or str(metadata.get("episode_summary") or "")
    character_id = character_id_for(name=name)
    with settled_transaction(character_id):
        lock_character_update(
            character_id,
            last_activity_at=timezone.now(),
            **language_choice_update(language=language, order=language_order),
        )
        if _dropped_by_tombstone(
            character_id=character_id,
            story_id=story_id,
            session_id=session_id,
            revision=revision,
            options=options,
        ):
            return "retracted"
        capsules = TheaterCapsule.objects.filter(character_id=character_id)
        if options.idempotency_key and capsules.filter(idempotency_key=options.idempotency_key).exists():
            return "cached"  # the same archive request again (a retry)
        existing = capsules.filter(story_id=story_id, session_id=session_id).first()
        fields = {
            "title": str(title)[:MAX_TITLE_CHARS],
            "archive_through_revision": revision,
            "summary": summary,
            "message": message,
            "idempotency_key": options.idempotency_key,
            "archive_attempt": options.archive_attempt,
            "forget_marker": options.forget_marker,
        }
        if existing is None:
            TheaterCapsule.objects.create(
                character_id=character_id, story_id=story_id, session_id=session_id, **fields
            )
        elif revision > existing.archive_through_revision:
            for field, value in fields.items():
                setattr(existing, field, value)
            existing.save()
        # An equal or older revision of a stored session is the same archive again, or a stale one.
    return "cached"


@dataclass(frozen=True)
class TheaterRemoved:
    removed_recent: int
    removed_time_index: int  # capsules never enter the raw log, so always 0; the original's field
    forget_marker: str = ""


def theater_story_forget(*, character_id: int, story_id: object) -> TheaterRemoved:
    """Remove the story's capsules and issue a fresh forget marker; a later capsule of the story is
    kept only if it carries it. Calling again removes nothing more (and issues a new marker)."""
    story = _identifier(story_id, field="story_id", blank="story_id_required")
    marker = secrets.token_urlsafe(24)
    with settled_transaction(character_id):
        removed, _ = TheaterCapsule.objects.filter(character_id=character_id, story_id=story).delete()
        TheaterTombstone.objects.create(
            character_id=character_id,
            kind=TheaterTombstone.Kind.FORGET,
            story_id=story,
            forget_marker=marker,
        )
    database_files_scrub()
    return TheaterRemoved(removed_recent=removed, removed_time_index=0, forget_marker=marker)


def theater_session_retract(
    *,
    character_id: int,
    story_id: object,
    session_id: object,
    archive_through_revision: object,
    archive_request_id: object = None,
    archive_attempt: object = None,
) -> TheaterRemoved:
    """Remove the session's capsule archived through ``archive_through_revision`` or earlier, after
    recording a tombstone that drops writes of that revision or earlier still in flight (and, with
    an ``archive_request_id``, that request's writes of that attempt or earlier). Idempotent."""
    story = _identifier(story_id, field="story_id", blank=IDENTITY_REQUIRED)
    session = _identifier(session_id, field="session_id", blank=IDENTITY_REQUIRED)
    revision = _count(archive_through_revision, field="archive_through_revision")
    if archive_request_id is None:
        archive_request_id = ""
    if not isinstance(archive_request_id, str) or len(archive_request_id) > MAX_IDEMPOTENCY_KEY:
        raise TheaterRequestError("archive_request_id_invalid")
    archive_request_id = archive_request_id.strip()
    attempt = None if archive_attempt is None else _count(archive_attempt, field="archive_attempt")
    with settled_transaction(character_id):
        TheaterTombstone.objects.get_or_create(
            character_id=character_id,
            kind=TheaterTombstone.Kind.RETRACT,
            story_id=story,
            session_id=session,
            archive_through_revision=revision,
            archive_request_id=archive_request_id or "",
            archive_attempt=attempt,
        )
        matching = Q(archive_through_revision__lte=revision)
        if archive_request_id:
            matching |= Q(idempotency_key=archive_request_id)
        removed, _ = TheaterCapsule.objects.filter(
            matching, character_id=character_id, story_id=story, session_id=session
        ).delete()
    if removed:
        database_files_scrub()
    return TheaterRemoved(removed_recent=removed, removed_time_index=0)


def theater_capsule_delete(*, character_id: int, capsule_id: int) -> TheaterRemoved:
    """The memory browser's delete of one capsule: what ``theater/forget`` does for its story."""
    story_id = (
        TheaterCapsule.objects.filter(character_id=character_id, pk=capsule_id)
        .values_list("story_id", flat=True)
        .first()
    )
    if story_id is None:
        return TheaterRemoved(removed_recent=0, removed_time_index=0)
    return theater_story_forget(character_id=character_id, story_id=story_id)


def theater_capsules_replace(*, character_id: int, messages: list[dict[str, Any]]) -> int:
    """An import's capsules (the ``recent.json`` entries marked as episode summaries) replace the
    character's, one per (story, session), the latest revision winning; inside the import's
    transaction. Returns how many are stored."""
    latest: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    for message in messages:
        metadata = theater_metadata(message) or {}
        try:
            key = (
                _identifier(metadata.get("story_id"), field="story_id"),
                _identifier(metadata.get("session_id"), field="session_id"),
            )
            revision = _revision(metadata.get("archive_through_revision", 0), field="revision")
        except TheaterRequestError:
            continue  # a capsule without its ids cannot be managed: left out rather than guessed
        if key not in latest or revision >= latest[key][0]:
            latest[key] = (revision, message)
    TheaterCapsule.objects.filter(character_id=character_id).delete()
    TheaterCapsule.objects.bulk_create(
        TheaterCapsule(
            character_id=character_id,
            story_id=story,
            session_id=session,
            title=str((theater_metadata(message) or {}).get("story_title") or "")[:MAX_TITLE_CHARS],
            archive_through_revision=revision,
            summary=message_text(message["data"].get("content")),
            message=message,
        )
        for (story, session), (revision, message) in latest.items()
    )
    return len(latest)
