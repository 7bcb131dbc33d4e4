"""Writes of the public knowledge store (reference §1.8).

A user's write waits at most ``WRITE_WAIT_SECONDS`` for the store (``store_lock``), then is refused
with ``knowledge_busy``. An import is a job (``KnowledgeImport``, on the kernel's job mechanism): the
request validates the pack and queues it; a task builds the new version's rows beside the version that
answers, then switches the pack to it in one transaction, under the store lock. A failed or cancelled
import deletes what it built, so the previous version keeps answering.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from knowledge import selectors
from knowledge.models import (
    ImportState,
    IndexBatch,
    KnowledgeChunk,
    KnowledgeEntry,
    KnowledgeImport,
    KnowledgePack,
    KnowledgeStore,
    PackVersion,
)
from knowledge.packs import (
    MATERIAL_TYPES,
    MAX_CHUNKS_PER_PACK,
    MAX_PACK_BYTES,
    MAX_PACKS,
    MAX_TOTAL_CHUNKS,
    MAX_TOTAL_ENTRIES,
    MAX_TOTAL_PACK_BYTES,
    Pack,
    PackEntry,
    PackRejected,
    pack_canonical_bytes,
    pack_decode,
    pack_from_canonical,
    pack_sha256,
    title_key,
)
from knowledge.query_log import diagnostics_trim, knowledge_query_record
from knowledge.search import (
    chunk_embed_text,
    entry_chunks,
    knowledge_index_refresh,
    knowledge_index_watch,
    knowledge_lookup,
)
from nekomem import embeddings
from nekomem.characters.locks import exclusive_work, store_lock
from nekomem.journal.broker import task_enqueue
from nekomem.journal.models import WorkStatus
from nekomem.journal.work import work_claim, work_current, work_succeed
from nekomem.runtime.state import STORAGE_BLOCKED, storage_writer

logger = logging.getLogger(__name__)

WRITE_WAIT_SECONDS = 5.0
# The switch of a finished build waits for user writes rather than failing the import.
SWITCH_WAIT_SECONDS = 120.0
MAX_PENDING_IMPORTS = 3
IMPORT_LEASE = timedelta(minutes=10)
IMPORT_TASK = "knowledge.tasks.knowledge_import_run"
VECTORS_TASK = "knowledge.tasks.knowledge_vectors_fill"
# Entries a build transaction: on SQLite each one holds the database's one write lock, which every
# lookup's diagnostics row and every memory write wait for meanwhile, so they are kept short.
BUILD_BATCH = 100
# Background vector fill: small batches while a lookup of this process is under way, so inference
# never holds the shared model long in front of a query vector; larger ones otherwise (fewer reads and
# writes a chunk; the model's own time a chunk barely depends on the batch).
INDEX_BATCH = 8
INDEX_BATCH_IDLE = 32
# Chunks a round: each round moves the store's vectors version, which every server rebuilds its index
# for, so rounds are not too small.
INDEX_ROUND = 256
# How long one fill task runs before it hands over to the next.
FILL_TASK_SECONDS = 30.0
QUERY_CHARS = 2_000
QUERY_LIMIT_MAX = 10
QUERY_BUDGET_DEFAULT = 1_500
QUERY_CONCURRENCY = 4
QUERY_MODES = ("lookup", "sample")
QUERY_MATERIAL_TYPES = ("auto", "all", *MATERIAL_TYPES)


class KnowledgeRefused(Exception):
    """A refused operation: answered ``200 {ok: false, reason}``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- the store ------------------------------------------------------------------------------------------

_change_listeners: list[Callable[[], None]] = []


def register_knowledge_change_listener(listener: Callable[[], None]) -> None:
    """Call ``listener`` after every committed change of the store (the install folder's writer)."""
    if listener not in _change_listeners:
        _change_listeners.append(listener)


def unregister_knowledge_change_listener(listener: Callable[[], None]) -> None:
    if listener in _change_listeners:
        _change_listeners.remove(listener)


def _index_refresh() -> None:
    """A process that answers lookups builds its own change now, so its next lookup sees it."""
    try:
        knowledge_index_refresh(
            entries_version=selectors.knowledge_store_version(),
            load_entries=selectors.knowledge_search_entries,
            serving_only=True,
        )
    except Exception:
        logger.warning("knowledge index refresh failed", exc_info=True)


# Set while many changes are made in a row (an install folder taken in): the index is rebuilt once at
# the end rather than after each pack.
_refresh_deferred: ContextVar[list[bool] | None] = ContextVar("knowledge_refresh_deferred", default=None)


@contextmanager
def index_refresh_deferred() -> Iterator[None]:
    """Changes inside leave the index alone; it is refreshed once on the way out if any was made."""
    if _refresh_deferred.get() is not None:
        yield
        return
    changed: list[bool] = []
    token = _refresh_deferred.set(changed)
    try:
        yield
    finally:
        _refresh_deferred.reset(token)
        if changed:
            _index_refresh()


def _changed(*, vectors_only: bool = False) -> None:
    """Inside the write's transaction: the store's version moves, and listeners run on commit.

    ``vectors_only``: the background fill stored vectors. Only its part of the version moves, which a
    lookup may lag behind, and the fill's worker builds no index: the processes that serve lookups do."""
    selectors.knowledge_store()
    if vectors_only:
        KnowledgeStore.objects.filter(pk=1).update(vectors_version=F("vectors_version") + 1)
    else:
        KnowledgeStore.objects.filter(pk=1).update(version=F("version") + 1)
    refresh_index = not vectors_only

    def notify() -> None:
        deferred = _refresh_deferred.get()
        if refresh_index and deferred is not None:
            deferred.append(True)
        elif refresh_index:
            _index_refresh()
        for listener in list(_change_listeners):
            try:
                listener()
            except Exception:
                logger.exception("knowledge change listener failed")

    transaction.on_commit(notify)


def _require_ready() -> None:
    if not selectors.knowledge_ready():
        raise KnowledgeRefused("knowledge_starting")


@contextmanager
def store_write(*, wait: float = WRITE_WAIT_SECONDS, background: bool = False) -> Iterator[None]:
    """The store's lock and one transaction, or ``knowledge_busy`` after ``wait`` seconds.
    ``background``: a job in the task cluster, whose process never runs the server's startup (so it is
    never "ready"); a ready server accepted the job, and the storage gate still applies to it."""
    if not background:
        _require_ready()
    with store_lock("knowledge", timeout=wait) as held:
        if not held:
            raise KnowledgeRefused("knowledge_busy")
        with transaction.atomic():
            yield


def _pack(pack_id: str) -> KnowledgePack:
    pack = KnowledgePack.objects.select_related("version").filter(pack_id=pack_id).first()
    if pack is None:
        raise KnowledgeRefused("not_found")
    return pack


def knowledge_enabled_set(*, enabled: bool) -> dict[str, Any]:
    with store_write():
        selectors.knowledge_store()
        KnowledgeStore.objects.filter(pk=1).update(enabled=enabled)
        _changed()
    if enabled:
        transaction.on_commit(_vectors_enqueue)
    return {"enabled": enabled}


def knowledge_pack_auto_context_set(*, pack_id: str, enabled: bool) -> dict[str, Any]:
    with store_write():
        pack = _pack(pack_id)
        KnowledgePack.objects.filter(pk=pack.pk).update(auto_context=enabled, updated_at=timezone.now())
        _changed()
    return {"pack_id": pack_id, "auto_context": enabled}


def knowledge_pack_local_embedding_set(*, pack_id: str, enabled: bool) -> dict[str, Any]:
    """Off: the pack is keyword-only. On again: the user's retry of chunks that failed to embed."""
    with store_write():
        pack = _pack(pack_id)
        KnowledgePack.objects.filter(pk=pack.pk).update(local_embedding=enabled, updated_at=timezone.now())
        if enabled and pack.version_id is not None:
            KnowledgeChunk.objects.filter(version_id=pack.version_id).filter(
                Q(failed=True) | Q(attempts__gt=0)
            ).update(failed=False, attempts=0)
            transaction.on_commit(_vectors_enqueue)
        _changed()
    return {"pack_id": pack_id, "local_embedding": enabled}


def knowledge_pack_material_type_set(*, pack_id: str, material_type: str | None) -> dict[str, Any]:
    """``None`` clears the override: the pack's declared type applies again."""
    if material_type is not None and material_type not in MATERIAL_TYPES:
        raise KnowledgeRefused("invalid_request")
    with store_write():
        pack = _pack(pack_id)
        pack.material_type_override = material_type or ""
        pack.updated_at = timezone.now()
        pack.save(update_fields=["material_type_override", "updated_at"])
        _changed()
    return {
        "pack_id": pack_id,
        "material_type_override": pack.material_type_override or None,
        "effective_material_type": pack.effective_material_type,
    }


def knowledge_entry_disabled_set(*, pack_id: str, title: str, disabled: bool) -> dict[str, Any]:
    """A disabled entry is still listed but never answers; the flag outlives a re-import."""
    key = title_key(title)
    with store_write():
        pack = _pack(pack_id)
        if (
            pack.version_id is None
            or not KnowledgeEntry.objects.filter(version_id=pack.version_id, title_key=key).exists()
        ):
            raise KnowledgeRefused("not_found")
        keys = set(pack.disabled_titles)
        if disabled:
            keys.add(key)
        else:
            keys.discard(key)
        pack.disabled_titles = sorted(keys)
        pack.updated_at = timezone.now()
        pack.save(update_fields=["disabled_titles", "updated_at"])
        _changed()
    return {"pack_id": pack_id, "disabled": disabled, "disabled_entries": len(keys)}


def knowledge_pack_remove(*, pack_id: str) -> dict[str, Any]:
    with store_write():
        pack = _pack(pack_id)
        removed = pack.version.entries_total if pack.version is not None else 0
        _imports_finish(
            KnowledgeImport.objects.filter(pack_id=pack_id, state=ImportState.QUEUED), ImportState.CANCELLED
        )
        version_id = pack.version_id
        pack.delete()
        if version_id is not None:
            PackVersion.objects.filter(pk=version_id).delete()
        _changed()
    return {"pack_id": pack_id, "removed_entries": removed}


def knowledge_store_clear() -> int:
    """Every pack, its state and every import gone (an import of a whole memory folder replaces the
    store). Returns the number of packs removed."""
    with store_write(wait=SWITCH_WAIT_SECONDS):
        removed = KnowledgePack.objects.count()
        KnowledgePack.objects.all().delete()
        PackVersion.objects.all().delete()
        KnowledgeImport.objects.all().delete()
        _changed()
    return removed


# --- imports --------------------------------------------------------------------------------------------


def _entry_chunks(*, title: str, summary: str, content: str) -> list[str]:
    return list(entry_chunks(title=title, summary=summary, content=content))


@dataclass(frozen=True)
class PreparedPack:
    pack: Pack
    canonical: bytes
    sha256: str
    chunks: list[list[str]]

    @property
    def chunks_total(self) -> int:
        return sum(len(texts) for texts in self.chunks)


def pack_prepare(*, raw: bytes, canonical_sha256: str = "") -> PreparedPack:
    """Validate ``raw`` and chunk its entries, or ``PackRejected`` (no write). ``canonical_sha256``:
    ``raw`` is the canonical form this store staged, with that hash (checked): it is read as it is."""
    if canonical_sha256 and pack_sha256(raw) == canonical_sha256:
        pack = pack_from_canonical(raw)
        chunks = [
            _entry_chunks(title=entry.title, summary=entry.summary, content=entry.content)
            for entry in pack.entries
        ]
        return PreparedPack(pack=pack, canonical=raw, sha256=canonical_sha256, chunks=chunks)
    # Not what was staged (damaged since): validated afresh, and refused unless it is that pack.
    pack = pack_decode(raw)
    canonical = pack_canonical_bytes(pack)
    if canonical_sha256 and pack_sha256(canonical) != canonical_sha256:
        raise PackRejected("knowledge_error")
    if len(canonical) > MAX_PACK_BYTES:
        # Normalisation fills in omitted fields and can grow a pack; what is kept is what counts.
        raise PackRejected("pack_too_large")
    chunks = [
        _entry_chunks(title=entry.title, summary=entry.summary, content=entry.content)
        for entry in pack.entries
    ]
    return PreparedPack(pack=pack, canonical=canonical, sha256=pack_sha256(canonical), chunks=chunks)


def _capacity_check(*, pack_id: str, entries: int, chunks: int, size: int, staged: int = 0) -> None:
    others = PackVersion.objects.filter(installed_as__isnull=False).exclude(pack_id=pack_id)
    counts = list(others.values_list("entries_total", "chunks_total", "size_bytes"))
    if len(counts) + 1 > MAX_PACKS:
        raise PackRejected("capacity_packs")
    if sum(row[0] for row in counts) + entries > MAX_TOTAL_ENTRIES:
        raise PackRejected("capacity_entries")
    if sum(row[1] for row in counts) + chunks > MAX_TOTAL_CHUNKS:
        raise PackRejected("capacity_chunks")
    if chunks > MAX_CHUNKS_PER_PACK:
        raise PackRejected("too_many_chunks")
    if sum(row[2] for row in counts) + staged + size > MAX_TOTAL_PACK_BYTES:
        raise PackRejected("capacity_bytes")


def knowledge_import_submit(*, raw: bytes) -> dict[str, Any]:
    """Queue an import of the pack in ``raw``; an identical pack answers ``unchanged`` at once."""
    _require_ready()
    if selectors.knowledge_imports_pending().count() >= MAX_PENDING_IMPORTS:
        return {"ok": False, "reason": "knowledge_busy"}
    try:
        prepared = pack_prepare(raw=raw)
    except PackRejected as rejected:
        return {"ok": False, "reason": rejected.reason}
    pack = prepared.pack
    installed = KnowledgePack.objects.select_related("version").filter(pack_id=pack.pack_id).first()
    if (
        installed is not None
        and installed.version is not None
        and not installed.broken
        and installed.version.sha256 == prepared.sha256
    ):
        return {"ok": True, "pack_id": pack.pack_id, "unchanged": True, "state": "active"}
    with store_write():
        pending = selectors.knowledge_imports_pending()
        if pending.filter(pack_id=pack.pack_id).exists():
            return {"ok": False, "reason": "job_in_progress"}
        if pending.count() >= MAX_PENDING_IMPORTS:
            return {"ok": False, "reason": "knowledge_busy"}
        staged = sum(pending.values_list("staged_bytes", flat=True))
        try:
            _capacity_check(
                pack_id=pack.pack_id,
                entries=len(pack.entries),
                chunks=prepared.chunks_total,
                size=len(prepared.canonical),
                staged=staged,
            )
        except PackRejected as rejected:
            return {"ok": False, "reason": rejected.reason}
        job = KnowledgeImport.objects.create(
            pack_id=pack.pack_id,
            entries_total=len(pack.entries),
            chunks_total=prepared.chunks_total,
            staged=prepared.canonical,
            staged_sha256=prepared.sha256,
            staged_bytes=len(prepared.canonical),
        )
        import_id = job.pk
        transaction.on_commit(lambda: _import_enqueue(import_id))
    return {"ok": True, **selectors.import_payload(job)}


def _import_enqueue(import_id: int) -> None:
    try:
        task_enqueue(IMPORT_TASK, import_id, task_name=f"knowledge-import-{import_id}", group="knowledge")
    except Exception:
        # The job row is durable; the knowledge tick enqueues it again.
        logger.exception("could not enqueue knowledge import %s; the tick will retry it", import_id)


def _vectors_enqueue() -> None:
    try:
        task_enqueue(VECTORS_TASK, task_name="knowledge-vectors", group="knowledge", save=False)
    except Exception:
        logger.exception("could not enqueue the knowledge vector fill; the tick runs it")


def _imports_finish(queryset: Any, state: str, reason: str = "") -> int:
    now = timezone.now()
    return int(
        queryset.update(
            state=state,
            reason=reason[:60],
            staged=None,
            status=WorkStatus.DONE,
            lease_until=None,
            finished_at=now,
            updated_at=now,
        )
    )


def knowledge_import_cancel(*, job_id: str) -> bool:
    """Only before its switch (queued or building); a build in flight notices and drops its rows."""
    with transaction.atomic():
        return (
            _imports_finish(
                KnowledgeImport.objects.filter(job_id=job_id, state__in=KnowledgeImport.PENDING_STATES),
                ImportState.CANCELLED,
            )
            == 1
        )


def knowledge_import_discard(*, job_id: str) -> bool:
    """Forget a finished job."""
    deleted, _ = KnowledgeImport.objects.filter(
        job_id=job_id, state__in=KnowledgeImport.FINISHED_STATES
    ).delete()
    return deleted > 0


class _Stopped(Exception):
    """The import was cancelled (or the pack removed) while it built."""


def _version_build(
    *, prepared: PreparedPack, should_stop: Callable[[], bool], previous: PackVersion | None
) -> PackVersion:
    """The new version's rows, beside the installed one and invisible until the switch."""
    pack = prepared.pack
    version = PackVersion.objects.create(
        pack_id=pack.pack_id,
        sha256=prepared.sha256,
        canonical=prepared.canonical,
        declared_material_type=pack.material_type,
        source_name=pack.source.name,
        source_homepage=pack.source.homepage,
        source_license=pack.source.license,
        entries_total=len(pack.entries),
        chunks_total=prepared.chunks_total,
        size_bytes=len(prepared.canonical),
    )
    # A chunk whose text did not change keeps its vector: a re-import does not embed it again.
    reusable: dict[str, tuple[bytes, str]] = {}
    if previous is not None:
        for text, vector, model_id in KnowledgeChunk.objects.filter(
            version=previous, vector__isnull=False
        ).values_list("text", "vector", "model_id"):
            if vector is not None:
                reusable[text] = (bytes(vector), model_id)
    for start in range(0, len(pack.entries), BUILD_BATCH):
        if should_stop():
            raise _Stopped
        with transaction.atomic():
            batch = pack.entries[start : start + BUILD_BATCH]
            ids = _entries_insert(version.pk, start, batch)
            chunks = []
            for ordinal_of_entry, entry_id in ids:
                for ordinal, text in enumerate(prepared.chunks[ordinal_of_entry]):
                    vector, model_id = reusable.get(text, (None, ""))
                    chunks.append((version.pk, entry_id, ordinal, text, vector, model_id, 0, False))
            _chunks_insert(chunks)
    return version


_ENTRY_COLUMNS = (
    "version_id",
    "ordinal",
    "title",
    "title_key",
    "summary",
    "content",
    "aliases",
    "recognition",
    "tags",
)
_CHUNK_COLUMNS = ("version_id", "entry_id", "ordinal", "text", "vector", "model_id", "attempts", "failed")


def _rows_insert(table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
    if not rows:
        return
    names = ", ".join(connection.ops.quote_name(name) for name in columns)
    marks = ", ".join(["%s"] * len(columns))
    with connection.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {connection.ops.quote_name(table)} ({names}) VALUES ({marks})", rows)


def _entries_insert(version_id: int, start: int, entries: Sequence[PackEntry]) -> list[tuple[int, int]]:
    """The entries' rows, as ``_chunks_insert`` does; (ordinal, id) of each, in order."""
    json_value = KnowledgeEntry._meta.get_field("tags").get_db_prep_save  # the three lists alike
    _rows_insert(
        KnowledgeEntry._meta.db_table,
        _ENTRY_COLUMNS,
        [
            (
                version_id,
                start + offset,
                entry.title,
                entry.key,
                entry.summary,
                entry.content,
                json_value(list(entry.aliases), connection),
                json_value(list(entry.recognition), connection),
                json_value(list(entry.tags), connection),
            )
            for offset, entry in enumerate(entries)
        ],
    )
    return list(
        KnowledgeEntry.objects.filter(
            version_id=version_id, ordinal__gte=start, ordinal__lt=start + len(entries)
        )
        .order_by("ordinal")
        .values_list("ordinal", "pk")
    )


def _chunks_insert(rows: list[tuple[Any, ...]]) -> None:
    """Chunk rows in one ``executemany``: ``bulk_create`` spent more on building 10 000 model instances
    and compiling their values than the database on storing them (cProfile of a 5 000-entry import)."""
    _rows_insert(KnowledgeChunk._meta.db_table, _CHUNK_COLUMNS, rows)


def _version_switch(*, job: KnowledgeImport, current: Any, version: PackVersion) -> None:
    """Make ``version`` the one that answers, in one transaction; ``_Stopped`` when the job was
    cancelled meanwhile (nothing then changed)."""
    with store_write(wait=SWITCH_WAIT_SECONDS, background=True):
        now = timezone.now()
        # The gate: a cancel and this switch each change the row only from its pending state.
        if not current.filter(state=ImportState.BUILDING).update(state=ImportState.ACTIVE, updated_at=now):
            raise _Stopped
        _capacity_check(
            pack_id=job.pack_id,
            entries=version.entries_total,
            chunks=version.chunks_total,
            size=version.size_bytes,
        )
        pack = KnowledgePack.objects.filter(pack_id=job.pack_id).first()
        keys = set(KnowledgeEntry.objects.filter(version=version).values_list("title_key", flat=True))
        if pack is None:
            pack = KnowledgePack(pack_id=job.pack_id, installed_at=now)
        previous_id = pack.version_id
        pack.version = version
        pack.broken = False
        pack.disabled_titles = sorted(set(pack.disabled_titles) & keys)
        pack.updated_at = now
        pack.save()
        if previous_id is not None and previous_id != version.pk:
            PackVersion.objects.filter(pk=previous_id).delete()
        work_succeed(current, staged=None, building=None)
        _changed()
        _jobs_trim()
        transaction.on_commit(_vectors_enqueue)


def _jobs_trim() -> None:
    keep = list(
        KnowledgeImport.objects.order_by("-created_at", "-id").values_list("pk", flat=True)[
            : selectors.JOBS_KEPT
        ]
    )
    KnowledgeImport.objects.filter(state__in=KnowledgeImport.FINISHED_STATES).exclude(pk__in=keep).delete()


def knowledge_import_run(*, import_id: int) -> str:
    """One run of an import job: build, then switch. Returns the job's state afterwards."""
    with storage_writer() as allowed:
        if not allowed:
            return STORAGE_BLOCKED
        return _import_run(import_id)


def _import_run(import_id: int) -> str:
    pending = KnowledgeImport.objects.filter(pk=import_id, state__in=KnowledgeImport.PENDING_STATES)
    token = work_claim(pending, lease=IMPORT_LEASE)
    if token is None:
        return "busy"
    current = work_current(KnowledgeImport, pk=import_id, token=token)
    current.filter(state=ImportState.QUEUED).update(state=ImportState.BUILDING, updated_at=timezone.now())
    job = KnowledgeImport.objects.filter(pk=import_id).first()
    if job is None or job.state != ImportState.BUILDING:
        return job.state if job is not None else ImportState.CANCELLED
    version: PackVersion | None = None
    try:
        prepared = pack_prepare(raw=bytes(job.staged or b""), canonical_sha256=job.staged_sha256)
        previous = PackVersion.objects.filter(installed_as__pack_id=job.pack_id).first()
        version = _version_build(
            prepared=prepared,
            previous=previous,
            should_stop=lambda: not current.filter(state=ImportState.BUILDING).exists(),
        )
        KnowledgeImport.objects.filter(pk=import_id).update(building=version)
        _version_switch(job=job, current=current, version=version)
        return ImportState.ACTIVE
    except _Stopped:
        _version_drop(version)
        _imports_finish(
            KnowledgeImport.objects.filter(pk=import_id, state=ImportState.BUILDING), ImportState.CANCELLED
        )
        return ImportState.CANCELLED
    except PackRejected as rejected:
        _version_drop(version)
        _imports_finish(current, ImportState.FAILED, rejected.reason)
        return ImportState.FAILED
    except KnowledgeRefused as refused:
        _version_drop(version)
        _imports_finish(current, ImportState.FAILED, refused.reason)
        return ImportState.FAILED
    except Exception as exc:
        logger.exception("knowledge import of %s failed", job.pack_id)
        _version_drop(version)
        _imports_finish(current, ImportState.FAILED, type(exc).__name__)
        return ImportState.FAILED


def _version_drop(version: PackVersion | None) -> None:
    if version is not None:
        PackVersion.objects.filter(pk=version.pk, installed_as__isnull=True).delete()


@dataclass(frozen=True)
class PackState:
    """The user's state of a pack, as the install folder's ``registry.json`` keeps it."""

    material_type_override: str | None = None
    auto_context: bool = False
    local_embedding: bool = True
    disabled_titles: tuple[str, ...] = ()


def knowledge_pack_install(*, raw: bytes, state: PackState | None = None) -> KnowledgePack:
    """Install a pack at once, without a job (the install folder taken in at start, an import of a
    memory folder): the same build and switch as an import, in this call. ``PackRejected`` when the
    pack or the store's capacity refuses it; the user's ``state`` replaces the pack's when given."""
    _require_ready()
    prepared = pack_prepare(raw=raw)
    installed = KnowledgePack.objects.select_related("version").filter(pack_id=prepared.pack.pack_id).first()
    if installed is None or installed.version is None or installed.version.sha256 != prepared.sha256:
        job = KnowledgeImport.objects.create(
            pack_id=prepared.pack.pack_id,
            state=ImportState.BUILDING,
            status=WorkStatus.RUNNING,
            entries_total=len(prepared.pack.entries),
            chunks_total=prepared.chunks_total,
        )
        current = KnowledgeImport.objects.filter(pk=job.pk)
        previous = installed.version if installed is not None else None
        version = _version_build(prepared=prepared, previous=previous, should_stop=lambda: False)
        try:
            _version_switch(job=job, current=current, version=version)
        except BaseException:
            _version_drop(version)
            _imports_finish(current, ImportState.FAILED, "knowledge_error")
            raise
    if state is not None:
        with store_write(wait=SWITCH_WAIT_SECONDS):
            KnowledgePack.objects.filter(pack_id=prepared.pack.pack_id).update(
                material_type_override=state.material_type_override
                if state.material_type_override in MATERIAL_TYPES
                else "",
                auto_context=state.auto_context,
                local_embedding=state.local_embedding,
                disabled_titles=sorted({title_key(t) for t in state.disabled_titles}),
            )
            _changed()
    return KnowledgePack.objects.select_related("version").get(pack_id=prepared.pack.pack_id)


def knowledge_pack_mark_broken(*, pack_id: str, state: PackState | None = None) -> None:
    """A pack the install folder lists but whose file is lost or altered: listed, never served."""
    with store_write(wait=SWITCH_WAIT_SECONDS):
        now = timezone.now()
        pack, _ = KnowledgePack.objects.get_or_create(
            pack_id=pack_id, defaults={"installed_at": now, "updated_at": now}
        )
        pack.broken = True
        if state is not None:
            pack.material_type_override = state.material_type_override or ""
            pack.auto_context = state.auto_context
            pack.local_embedding = state.local_embedding
            pack.disabled_titles = sorted({title_key(t) for t in state.disabled_titles})
        pack.save()
        _changed()


# --- the background vector fill -------------------------------------------------------------------------


def knowledge_vectors_fill(*, max_chunks: int = INDEX_ROUND, batch: int | None = None) -> int:
    """Embed up to ``max_chunks`` chunks that lack a vector of the current model, ``batch`` at a time.

    Runs only in the background (a task, the tick), never on a request: like the memory layers'
    backfill it takes the process's embedding model, loading it in the worker when it must. At most 3
    attempts a chunk; packs with local embedding off are skipped. ``batch``: chunks an inference (None:
    ``INDEX_BATCH`` while a lookup of this process runs, else ``INDEX_BATCH_IDLE``). Returns the number
    of chunks it tried."""
    with storage_writer() as allowed, exclusive_work("knowledge-vectors") as held:
        if not allowed or not held:
            return 0
        return _vectors_fill(max_chunks=max_chunks, batch=batch)


def _vectors_fill(*, max_chunks: int, batch: int | None) -> int:
    # Not ``knowledge_ready()``: the task cluster never runs the server's startup, and the storage
    # block is already honoured by ``storage_writer``.
    if not selectors.knowledge_store().enabled or not _vectors_wanted():
        return 0
    embedder = embeddings.get_embedder()
    if embedder is None:
        return 0
    model_id = embedder.model_id
    processed = 0
    stored_any = False
    while processed < max_chunks:
        size = batch or (INDEX_BATCH if _lookups.running() else INDEX_BATCH_IDLE)
        rows = list(
            KnowledgeChunk.objects.filter(
                version__installed_as__local_embedding=True,
                version__installed_as__broken=False,
                failed=False,
            )
            .exclude(vector__isnull=False, model_id=model_id)
            .select_related("entry")
            .order_by("id")[: min(size, max_chunks - processed)]
        )
        if not rows:
            break
        started = time.monotonic()
        texts = [
            chunk_embed_text(
                title=row.entry.title, summary=row.entry.summary, chunk=row.text, first=row.ordinal == 0
            )
            for row in rows
        ]
        try:
            vectors = embedder.embed(texts)
        except Exception:
            vectors = None
        stored = failed = 0
        with transaction.atomic():
            # One statement for the batch, not one update a row.
            table = connection.ops.quote_name(KnowledgeChunk._meta.db_table)
            with connection.cursor() as cursor:
                if vectors is not None:
                    cursor.executemany(
                        f"UPDATE {table} SET vector = %s, model_id = %s, attempts = 0, failed = %s "
                        "WHERE id = %s",
                        [
                            (vectors[at].astype("<f4").tobytes(), model_id, False, row.pk)
                            for at, row in enumerate(rows)
                        ],
                    )
                    stored = len(rows)
                else:
                    cursor.executemany(
                        f"UPDATE {table} SET attempts = %s, failed = %s WHERE id = %s",
                        [
                            (row.attempts + 1, row.attempts + 1 >= KnowledgeChunk.MAX_ATTEMPTS, row.pk)
                            for row in rows
                        ],
                    )
                    failed = sum(row.attempts + 1 >= KnowledgeChunk.MAX_ATTEMPTS for row in rows)
            IndexBatch.objects.create(
                model_id=model_id,
                selected=len(rows),
                stored=stored,
                failed=failed,
                elapsed_ms=int((time.monotonic() - started) * 1000),
            )
            diagnostics_trim(IndexBatch)
        processed += len(rows)
        stored_any = stored_any or stored > 0
        if not stored:
            break
    if stored_any:
        # Once a round, not once a batch: every change of the version rebuilds the lookups' index.
        with transaction.atomic():
            _changed(vectors_only=True)
    return processed


def _vectors_wanted() -> bool:
    """Some chunk of a sound, embedding pack may still get a vector (so an idle fill loads no model)."""
    return KnowledgeChunk.objects.filter(
        version__installed_as__local_embedding=True, version__installed_as__broken=False, failed=False
    ).exists()


def knowledge_vectors_fill_until_done(
    *, seconds: float = FILL_TASK_SECONDS, round_chunks: int = INDEX_ROUND
) -> int:
    """The fill task: rounds until every chunk has its vector, or ``seconds`` pass; then it hands the
    rest to a fresh task, so one large pack is embedded within minutes rather than a round a minute,
    and no task holds a worker for long."""
    deadline = time.monotonic() + seconds
    total = 0
    while time.monotonic() < deadline:
        tried = knowledge_vectors_fill(max_chunks=round_chunks)
        total += tried
        if tried < round_chunks:
            return total
    _vectors_enqueue()
    return total


def knowledge_tick() -> dict[str, int]:
    """The schedule's minute: re-enqueue imports whose task was lost, drop builds nobody finishes,
    and run one round of the vector fill."""
    now = timezone.now()
    lost = KnowledgeImport.objects.filter(state__in=KnowledgeImport.PENDING_STATES).filter(
        Q(status=WorkStatus.PENDING, updated_at__lte=now - timedelta(minutes=1))
        | Q(status=WorkStatus.RUNNING, lease_until__lt=now)
    )
    ids = list(lost.values_list("pk", flat=True))
    KnowledgeImport.objects.filter(pk__in=ids, status=WorkStatus.RUNNING).update(
        status=WorkStatus.PENDING, lease_until=None, run_token=None, state=ImportState.QUEUED
    )
    for import_id in ids:
        _import_enqueue(import_id)
    building = KnowledgeImport.objects.filter(state=ImportState.BUILDING).values_list(
        "building_id", flat=True
    )
    PackVersion.objects.filter(installed_as__isnull=True, created_at__lt=now - IMPORT_LEASE).exclude(
        pk__in=[pk for pk in building if pk is not None]
    ).delete()
    return {"imports": len(ids), "vectors": knowledge_vectors_fill()}


# --- queries --------------------------------------------------------------------------------------------

_query_slots = threading.BoundedSemaphore(QUERY_CONCURRENCY)


class _Running:
    """How many lookups of this process are under way (the vector fill's batch size reads it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    def __enter__(self) -> None:
        with self._lock:
            self._count += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._count -= 1

    def running(self) -> bool:
        return self._count > 0


_lookups = _Running()


def knowledge_query(
    *,
    query: str,
    mode: str = "lookup",
    material_type: str = "auto",
    limit: int = 3,
    budget_ms: int = QUERY_BUDGET_DEFAULT,
    language: str | None = None,
    explain: bool = False,
) -> dict[str, Any]:
    """Look up (or sample) entries for the chat's tool; never raises. ``result`` is one of matched,
    miss, timeout, busy, error, disabled, unavailable; ``context`` is "" unless matched. ``explain``
    (the browser's query box, never the wire) adds ``ranks``: each hit's rank on every path."""
    started = time.monotonic()
    mode = mode if mode in QUERY_MODES else "lookup"
    material_type = material_type if material_type in QUERY_MATERIAL_TYPES else "auto"
    query = query.strip()[:QUERY_CHARS]
    limit = min(max(limit, 1), QUERY_LIMIT_MAX)
    budget_ms = min(max(budget_ms, 50), 5_000)

    def finish(result: str, **extra: Any) -> dict[str, Any]:
        elapsed = int((time.monotonic() - started) * 1000)
        hits = list(extra.get("hits") or [])
        answer = {
            "result": result,
            "context": extra.get("context", "") if result == "matched" else "",
            "hits": hits,
            "card_ids": list(extra.get("card_ids") or []),
            "retrieval_mode": extra.get("retrieval_mode", ""),
            "elapsed_ms": elapsed,
        }
        if explain:
            answer["ranks"] = list(extra.get("ranks") or [])
        # Off the answer: on SQLite a write waits for the database's one write lock, which an
        # import's build transactions hold in turns. A storage block leaves the record queued.
        knowledge_query_record(
            mode=mode,
            result=result,
            retrieval_mode=answer["retrieval_mode"],
            hits=len(hits),
            entry_title=hits[0]["title"][:500] if hits else "",
            pack_id=hits[0]["pack_id"] if hits else "",
            elapsed_ms=elapsed,
            error_type=extra.get("error_type", "")[:80],
        )
        return answer

    if not selectors.knowledge_ready():
        return finish("unavailable")
    if not selectors.knowledge_store().enabled:
        return finish("disabled")
    if not query:
        return finish("miss")
    if not _query_slots.acquire(blocking=False):
        return finish("busy")
    try:
        # Several servers on one PostgreSQL database: each polls the store's version, so a pack
        # imported, disabled or removed on one is answered by all within 2 s. SQLite is one server.
        knowledge_index_watch(
            read_version=selectors.knowledge_store_version,
            load_entries=selectors.knowledge_search_entries,
            poll=connection.vendor == "postgresql",
        )
        with _lookups:
            outcome = knowledge_lookup(
                entries_version=selectors.knowledge_store_version(),
                load_entries=selectors.knowledge_search_entries,
                query=query,
                mode=mode,
                material_type=material_type,
                limit=limit,
                budget_ms=budget_ms,
                language=language or "",
            )
    except Exception as exc:
        logger.warning("knowledge query failed: %s", type(exc).__name__, exc_info=True)
        return finish("error", error_type=type(exc).__name__)
    finally:
        _query_slots.release()
    return finish(
        outcome.result,
        context=outcome.context,
        hits=outcome.hits,
        card_ids=outcome.card_ids,
        retrieval_mode=outcome.retrieval_mode,
        ranks=outcome.ranks,
    )
