from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import IntegrityError, OperationalError, connection, transaction
from django.db.models import F
from django.utils import timezone

from nekomem.characters.language import language_choice_update, stored_language
from nekomem.characters.locks import lock_character, settled_transaction
from nekomem.characters.models import Character, CharacterRelease, MemoryChange
from nekomem.characters.names import validate_character_name
from nekomem.characters.selectors import (
    CharacterFootprint,
    character_footprint,
    character_release_in_progress,
)
from nekomem.errors import Conflict
from nekomem.journal.jobs import job_cancel, registered_job_kinds
from nekomem.journal.models import Job
from nekomem.language.codes import SUPPORTED_LANGUAGES, supported_language

logger = logging.getLogger(__name__)


class CharacterNotFound(LookupError):
    pass


class CharacterNameTaken(Conflict):
    """Another character already has the name (HTTP 409); nothing was changed."""


def character_get_or_create(*, name: str) -> Character:
    """Return the character, creating it on first contact (a first ``/cache`` for a valid name)."""
    validate_character_name(name)
    existing = Character.objects.filter(name=name).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            return Character.objects.create(name=name)
    except IntegrityError:
        # Another request created it between our read and our insert.
        return Character.objects.get(name=name)


# name -> id for the chat write path, per process. A cached id can be stale (the character was
# deleted, or a rolled-back id was reused), so only a write that matches the name as well uses it,
# and a write that finds no row calls character_id_forget.
_ID_CACHE_LIMIT = 10_000
_ids_by_name: dict[str, int] = {}


def character_id_for(*, name: str, cached: bool = False) -> int:
    """The character's id, creating the character on first contact.

    ``cached``: answer from the process's cache when it can. Only for a caller whose write also
    checks the name, since the cached id may belong to a deleted character.
    """
    if cached and (hit := _ids_by_name.get(name)) is not None:
        return hit
    character_id = Character.objects.filter(name=name).values_list("pk", flat=True).first()
    if character_id is None:
        character_id = character_get_or_create(name=name).pk
    if len(_ids_by_name) >= _ID_CACHE_LIMIT:
        _ids_by_name.clear()
    _ids_by_name[name] = character_id
    return character_id


def character_id_forget(*, name: str | None = None) -> None:
    """Drop a cached id (or all of them): the character was deleted or its database replaced."""
    if name is None:
        _ids_by_name.clear()
    else:
        _ids_by_name.pop(name, None)


def character_memory_changed(
    *,
    character_id: int,
    pool: str = "",
    rows: Iterable[int] | None = None,
    vector_only: bool = False,
    held: Sequence[object] = (),
) -> None:
    """Bump the recall-cache version and log what changed, inside the caller's write transaction.

    Every process compares the version with the one its cached index reflects and applies the logged
    rows since (``pool`` and ``rows``: the primary keys of the rows written or deleted). Without a pool
    the change is unknown in detail and readers rebuild. The version is read back under the row lock
    the UPDATE takes, so versions are in commit order per character on every database.

    ``held``: model instances of some of ``rows`` as the caller just saved them; the observers may take
    their state from them instead of reading the rows again (issue 49: a version's cost on an edit).
    """
    with transaction.atomic():
        Character.objects.filter(pk=character_id).update(memory_version=F("memory_version") + 1)
        version = Character.objects.filter(pk=character_id).values_list("memory_version", flat=True).first()
        if version is None:
            return
        keys: list[int | None] = [*sorted(set(rows))] if pool and rows is not None else []
        MemoryChange.objects.bulk_create(
            MemoryChange(
                character_id=character_id, version=version, pool=pool, row=key, vector_only=vector_only
            )
            for key in keys or [None]
        )
        if pool and rows is not None and not vector_only:
            for observe in _change_observers.values():
                observe(character_id, pool, [key for key in keys if key is not None], held)


# What else follows every change of a row in the caller's transaction (the journal's versions), registered
# from an AppConfig.ready(): called with the character, the pool, the primary keys written or deleted, and
# the instances of those rows the caller holds as saved (often none).
MemoryChangeObserver = Callable[[int, str, list[int], Sequence[object]], None]
_change_observers: dict[str, MemoryChangeObserver] = {}


def register_memory_change_observer(name: str, observer: MemoryChangeObserver) -> None:
    _change_observers[name] = observer


def character_raw_rows_counted(*, character_id: int, rows: int) -> None:
    """Count ``rows`` new raw-log rows on the character (``Character.raw_rows_written``), inside the
    transaction that writes them: a recall cache that has read as many rows has every raw turn."""
    if rows:
        Character.objects.filter(pk=character_id).update(raw_rows_written=F("raw_rows_written") + rows)


# --- forgetting: a deleted row's text leaves every copy -------------------------------------------------

# What a process keeps of a character's memory outside its rows (recall indexes and their snapshots, the
# install folder's files): each owner registers how to bring it up to date after a deletion, from its
# AppConfig.ready(), and returns how many copies it removed or rewrote, by name.
MemoryForgotten = Callable[[int], dict[str, int]]
_forgotten_hooks: dict[str, MemoryForgotten] = {}


def register_memory_forgotten(name: str, hook: MemoryForgotten) -> None:
    _forgotten_hooks[name] = hook


@dataclass(frozen=True)
class Forgotten:
    """What one deletion removed: the layer's rows (by kind) and the copies elsewhere (by owner)."""

    rows: dict[str, int]
    copies: dict[str, int]

    def as_json(self) -> dict[str, dict[str, int]]:
        return {"removed": dict(self.rows), "copies": dict(self.copies)}

    def summary(self) -> str:
        parts = {**self.rows, **self.copies}
        return ", ".join(f"{name} {count}" for name, count in parts.items() if count)


def character_memory_forgotten(*, character_id: int) -> None:
    """Inside the deleting transaction, after ``character_memory_changed``: a saved copy (a recall
    snapshot) older than this version may hold the deleted text, so it is dropped, never loaded."""
    Character.objects.filter(pk=character_id).update(forgotten_version=F("memory_version"))


def memory_forgotten_apply(*, character_id: int, rows: dict[str, int]) -> Forgotten:
    """After the deleting transaction: every registered owner brings this process's copies up to date
    (its recall index, the snapshots on disk, the folder's files) before the delete returns. Other
    processes apply the change log at their next query, as for any change."""
    copies: dict[str, int] = {}
    for owner, hook in _forgotten_hooks.items():
        try:
            copies.update(hook(character_id))
        except Exception:  # the rows are gone; a copy not updated here is caught up at its next read
            logger.exception("forgetting character=%s in %s failed", character_id, owner)
    database_files_scrub()
    return Forgotten(rows=rows, copies=copies)


def database_files_scrub() -> None:
    """After a forgetting commit, before its answer: on SQLite no byte of the database files keeps the
    text. ``secure_delete`` (set on every connection) zeroes the deleted cells in the pages it writes,
    but the WAL still holds the frames that wrote the text until a checkpoint copies them back and the
    file is cut to nothing (TRUNCATE, which waits for readers still on an older snapshot).

    Inside an outer transaction it runs once that commits: the rows are not gone before. PostgreSQL
    keeps a deleted row's tuple until VACUUM reclaims it (the README says so); nothing is done there."""
    if connection.vendor != "sqlite" or getattr(connection, "is_in_memory_db")():  # noqa: B009  # not in the base stubs
        return
    transaction.on_commit(_wal_truncate)


def _wal_truncate() -> None:
    if connection.in_atomic_block:  # a test running the commit's callbacks inside its own transaction
        return
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            busy, frames, copied = cursor.fetchone()
    except OperationalError:  # the rows are gone whatever happens here; the next checkpoint copies them
        logger.exception("forgetting checkpoint failed")
        return
    if busy:  # a reader held on past the busy timeout: the next forgetting (or checkpoint) finishes it
        logger.warning("forgetting checkpoint incomplete frames=%s copied=%s", frames, copied)
    logger.info("forgetting checkpoint %.1f ms", (time.perf_counter() - started) * 1000)


# --- rename and delete ----------------------------------------------------------------------------------

# What a process keeps per character outside the database (a layer's caches, its files under var/):
# each owner registers how to drop it (from its AppConfig.ready(); the kernel knows no layer).
CharacterForget = Callable[[int], None]
_forgetters: dict[str, CharacterForget] = {}


def register_character_forget(name: str, forget: CharacterForget) -> None:
    _forgetters[name] = forget


def _forget_after_commit(*, character_id: int, names: Iterable[str]) -> None:
    def forget() -> None:
        for name in names:
            character_id_forget(name=name)
        for owner, drop in _forgetters.items():
            try:
                drop(character_id)
            except Exception:  # a cache that cannot be dropped rebuilds itself; the change is made
                logger.exception("forgetting character=%s in %s failed", character_id, owner)

    transaction.on_commit(forget)


def _existing(name: str) -> Character:
    character = Character.objects.filter(name=name).first()
    if character is None:
        raise CharacterNotFound(f"no character named {name!r}")
    return character


def character_rename(*, name: str, new_name: str) -> Character:
    """Give the character ``new_name`` (the original's ``update_catgirl_name``).

    Every row of every layer belongs to the character by key, so its memory follows with the name
    column; what is kept by name (the id cache, recall indexes built with the old name as a stop name,
    renders that print it) is dropped. Raises ``InvalidCharacterName``, ``CharacterNotFound``, or
    ``CharacterNameTaken`` (nothing changed).
    """
    validate_character_name(new_name)
    character = _existing(name)
    if new_name == name:
        return character
    with settled_transaction(character.pk):
        lock_character(character.pk)
        if Character.objects.filter(name=new_name).exists():
            raise CharacterNameTaken(f"a character named {new_name!r} already exists")
        try:
            with transaction.atomic():
                Character.objects.filter(pk=character.pk).update(name=new_name)
        except IntegrityError as exc:  # created between the check and the update
            raise CharacterNameTaken(f"a character named {new_name!r} already exists") from exc
        # The name is in what recall and /new_dialog render: their caches key on the version.
        character_memory_changed(character_id=character.pk)
        _forget_after_commit(character_id=character.pk, names=(name, new_name))
    logger.info("character renamed id=%s", character.pk)
    return Character.objects.get(pk=character.pk)


def character_delete(*, name: str) -> CharacterFootprint:
    """Delete the character and every row of its memory; returns what was deleted, per layer."""
    character = _existing(name)
    with settled_transaction(character.pk):
        lock_character(character.pk)
        footprint = character_footprint(character_id=character.pk)
        Character.objects.filter(pk=character.pk).delete()
        _forget_after_commit(character_id=character.pk, names=(name,))
    # Before the delete returns (and whether or not an outer transaction defers the hooks above): this
    # process's index and the snapshots on disk go; other processes find no character at their next query.
    memory_forgotten_apply(character_id=character.pk, rows={})
    logger.info("character deleted id=%s rows=%d", character.pk, footprint.total)
    return footprint


@dataclass(frozen=True)
class Released:
    character_found: bool
    cancelled_jobs: int


def character_release(*, name: str) -> Released:
    """``/release_character``: before a rename or delete, stop the character's derived background work
    (the jobs its layers enqueue, such as a history review or a compression retry: the original's
    review and compress tasks). Scheduled loops and the outbox are left alone: they key on the
    character's id, not its name, and find a renamed character as it is."""
    validate_character_name(name)
    with character_release_held(name=name):
        character = Character.objects.filter(name=name).first()
        if character is None:
            return Released(character_found=False, cancelled_jobs=0)
        derived = [kind.kind for kind in registered_job_kinds() if not kind.run_by_schedule]
        active = (
            Job.objects.filter(character_id=character.pk, kind__in=derived, status__in=Job.ACTIVE)
            .values_list("kind", "key")
            .distinct()
        )
        cancelled = sum(
            job_cancel(character_id=character.pk, kind=kind, key=key) for kind, key in list(active)
        )
        return Released(character_found=True, cancelled_jobs=cancelled)


class CharacterReleaseInProgress(Conflict, ValueError):
    """A write that the original fences while the character is released (HTTP 409, reference §1.7)."""


@contextmanager
def character_release_held(*, name: str) -> Iterator[None]:
    """Hold the character's name as "being released" for the block, in a row every worker sees.

    The row is written in its own transaction before the block and deleted after it (whatever the
    block raised), so a write in another worker meanwhile is answered 409. Two releases of one name
    at once share the row; the first to finish lifts it, which only shortens the fence."""
    with transaction.atomic():
        CharacterRelease.objects.update_or_create(name=name, defaults={"started_at": timezone.now()})
    try:
        yield
    finally:
        CharacterRelease.objects.filter(name=name).delete()


def character_release_check(*, name: str) -> None:
    """Raise ``CharacterReleaseInProgress`` while ``/release_character`` holds this name."""
    if character_release_in_progress(name=name):
        raise CharacterReleaseInProgress("character release in progress")


# How much of each character's memory-change log is kept. A reader further behind than this rebuilds
# its index instead of applying the changes, which costs about as much as applying this many.
MEMORY_CHANGES_KEPT_VERSIONS = 10_000
MEMORY_CHANGES_KEPT_ROWS = 200_000


def memory_changes_prune(
    *, kept_versions: int = MEMORY_CHANGES_KEPT_VERSIONS, kept_rows: int = MEMORY_CHANGES_KEPT_ROWS
) -> int:
    """Drop each character's memory-change rows older than the last ``kept_versions`` versions, or
    past the newest ``kept_rows`` rows; returns how many went. Readers notice the gap and rebuild."""
    removed = 0
    for character_id, version in Character.objects.order_by("pk").values_list("pk", "memory_version"):
        floor = version - kept_versions
        by_rows = (
            MemoryChange.objects.filter(character_id=character_id)
            .order_by("-version")
            .values_list("version", flat=True)[kept_rows : kept_rows + 1]
        )
        floor = max([floor, *by_rows])
        if floor <= 0:
            continue
        deleted, _ = MemoryChange.objects.filter(character_id=character_id, version__lte=floor).delete()
        removed += deleted
    return removed


# --- the durable prompt locale (reference §1.7; nekomem/characters/language.py) ----------------------------


class LanguageSuperseded(Conflict):
    """A choice that arrived later than this one is already stored (HTTP 409); nothing was changed."""


class UnsupportedLanguage(ValueError):
    pass


@dataclass(frozen=True)
class LanguageChoice:
    language: str
    order: int
    previous_language: str | None
    changed: bool


def character_language_set(*, name: str, language: object, order: int) -> LanguageChoice:
    """The language page's choice, stamped ``order`` when its request arrived.

    Raises ``UnsupportedLanguage`` for a code that is not one of ours and ``LanguageSuperseded`` when
    a choice that arrived later is already stored (its request finished first).
    """
    code = supported_language(language) if isinstance(language, str) else None
    if code is None:
        raise UnsupportedLanguage(
            f"unsupported language {language!r}; one of {', '.join(SUPPORTED_LANGUAGES)}"
        )
    character = character_get_or_create(name=name)
    with transaction.atomic():
        current = lock_character(character.pk)
        if current.language_order >= order:
            raise LanguageSuperseded("a newer language preference is already stored")
        previous = stored_language(current)
        Character.objects.filter(pk=character.pk).update(language=code, language_order=order)
    return LanguageChoice(language=code, order=order, previous_language=previous, changed=previous != code)


def character_language_offer(*, character_id: int, language: str | None, order: int) -> bool:
    """Remember a request's explicit ``language`` unless a newer choice is stored; True when stored.
    An absent or unsupported language changes nothing."""
    fields = language_choice_update(language=language, order=order)
    if not fields:
        return False
    return bool(Character.objects.filter(pk=character_id, language_order__lt=order).update(**fields))
