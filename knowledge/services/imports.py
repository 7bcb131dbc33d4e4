"""Pack imports: a kernel job (``KnowledgeImport``) that builds the new version's rows beside the
one that answers and switches to it in one transaction; the same build and switch at once for an
install folder taken in."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from knowledge import selectors
from knowledge.models import (
    ImportState,
    KnowledgeChunk,
    KnowledgeEntry,
    KnowledgeImport,
    KnowledgePack,
    PackVersion,
)
from knowledge.packs import (
    MATERIAL_TYPES,
    PackEntry,
    PackRejected,
    title_key,
)
from knowledge.search.chunking import row_texts
from knowledge.search.stored_rows import rows_stored_form, stored_digest
from knowledge.services.store import (
    SWITCH_WAIT_SECONDS,
    KnowledgeRefused,
    require_ready,
    store_changed,
    store_write,
)
from knowledge.services.validation import PreparedPack, capacity_check, pack_prepare
from knowledge.services.vectors import knowledge_vectors_fill, vectors_enqueue
from nekomem.journal.broker import task_enqueue
from nekomem.journal.models import WorkStatus
from nekomem.journal.work import work_claim, work_current, work_succeed
from nekomem.runtime.state import STORAGE_BLOCKED, storage_writer

if TYPE_CHECKING:
    # The user's state kept with a pack: its module removes packs, which cancels their imports here.
    from knowledge.services.pack_state import PackState

logger = logging.getLogger(__name__)

MAX_PENDING_IMPORTS = 3
IMPORT_LEASE = timedelta(minutes=10)
IMPORT_TASK = "knowledge.tasks.knowledge_import_run"
# Entries a build transaction: on SQLite each one holds the database's one write lock, which every
# lookup's diagnostics row and every memory write wait for meanwhile, so they are kept short.
BUILD_BATCH = 100


def knowledge_import_submit(*, raw: bytes) -> dict[str, Any]:
    """Queue an import of the pack in ``raw``; an identical pack answers ``unchanged`` at once."""
    require_ready()
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
            capacity_check(
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


def imports_finish(queryset: Any, state: str, reason: str = "") -> int:
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
            imports_finish(
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


def version_build(
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
    # A chunk whose text did not change keeps its vector: a re-import does not embed it again. A row
    # whose text did not change keeps its counted form: a re-import does not tokenise it again.
    reusable: dict[str, tuple[bytes, str]] = {}
    counted_before: dict[bytes, bytes] = {}
    if previous is not None:
        for text, vector, model_id, row in KnowledgeChunk.objects.filter(version=previous).values_list(
            "text", "vector", "model_id", "bm25_row"
        ):
            if vector is not None:
                reusable[text] = (bytes(vector), model_id)
            if row is not None:
                counted_before[stored_digest(bytes(row))] = bytes(row)
    for start in range(0, len(pack.entries), BUILD_BATCH):
        if should_stop():
            raise _Stopped
        batch = pack.entries[start : start + BUILD_BATCH]
        # Counted before the transaction: on SQLite it holds the one write lock.
        counted = _batch_rows_counted(batch, prepared.chunks[start : start + BUILD_BATCH], counted_before)
        with transaction.atomic():
            ids = _entries_insert(version.pk, start, batch)
            chunks = []
            for ordinal_of_entry, entry_id in ids:
                rows = counted[ordinal_of_entry - start]
                for ordinal, text in enumerate(prepared.chunks[ordinal_of_entry]):
                    vector, model_id = reusable.get(text, (None, ""))
                    chunks.append(
                        (version.pk, entry_id, ordinal, text, vector, model_id, 0, False, rows[ordinal])
                    )
            _chunks_insert(chunks)
    return version


def _batch_rows_counted(
    entries: Sequence[PackEntry], chunks: Sequence[list[str]], known: dict[bytes, bytes]
) -> list[list[bytes]]:
    """Each entry's BM25 rows counted, one a chunk, in their stored form: tokenised once here, in the
    task worker, rather than by every server that takes the pack into its index (a row ``known`` by
    its digest, from the previous version, is not tokenised again)."""
    texts = [
        row_texts(
            title=entry.title,
            aliases=entry.aliases,
            recognition=entry.recognition,
            summary=entry.summary,
            tags=entry.tags,
            chunks=entry_chunks,
        )
        for entry, entry_chunks in zip(entries, chunks, strict=True)
    ]
    stored = iter(rows_stored_form([text for rows in texts for text in rows], known))
    return [[next(stored) for _ in rows] for rows in texts]


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
_CHUNK_COLUMNS = (
    "version_id",
    "entry_id",
    "ordinal",
    "text",
    "vector",
    "model_id",
    "attempts",
    "failed",
    "bm25_row",
)


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


def version_switch(*, job: KnowledgeImport, current: Any, version: PackVersion) -> None:
    """Make ``version`` the one that answers, in one transaction; ``_Stopped`` when the job was
    cancelled meanwhile (nothing then changed)."""
    with store_write(wait=SWITCH_WAIT_SECONDS, background=True):
        now = timezone.now()
        # The gate: a cancel and this switch each change the row only from its pending state.
        if not current.filter(state=ImportState.BUILDING).update(state=ImportState.ACTIVE, updated_at=now):
            raise _Stopped
        capacity_check(
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
        store_changed()
        _jobs_trim()
        transaction.on_commit(vectors_enqueue)


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
        version = version_build(
            prepared=prepared,
            previous=previous,
            should_stop=lambda: not current.filter(state=ImportState.BUILDING).exists(),
        )
        KnowledgeImport.objects.filter(pk=import_id).update(building=version)
        version_switch(job=job, current=current, version=version)
        return ImportState.ACTIVE
    except _Stopped:
        version_drop(version)
        imports_finish(
            KnowledgeImport.objects.filter(pk=import_id, state=ImportState.BUILDING), ImportState.CANCELLED
        )
        return ImportState.CANCELLED
    except PackRejected as rejected:
        version_drop(version)
        imports_finish(current, ImportState.FAILED, rejected.reason)
        return ImportState.FAILED
    except KnowledgeRefused as refused:
        version_drop(version)
        imports_finish(current, ImportState.FAILED, refused.reason)
        return ImportState.FAILED
    except Exception as exc:
        logger.exception("knowledge import of %s failed", job.pack_id)
        version_drop(version)
        imports_finish(current, ImportState.FAILED, type(exc).__name__)
        return ImportState.FAILED


def version_drop(version: PackVersion | None) -> None:
    if version is not None:
        PackVersion.objects.filter(pk=version.pk, installed_as__isnull=True).delete()


def knowledge_pack_install(*, raw: bytes, state: PackState | None = None) -> KnowledgePack:
    """Install a pack at once, without a job (the install folder taken in at start, an import of a
    memory folder): the same build and switch as an import, in this call. ``PackRejected`` when the
    pack or the store's capacity refuses it; the user's ``state`` replaces the pack's when given."""
    require_ready()
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
        version = version_build(prepared=prepared, previous=previous, should_stop=lambda: False)
        try:
            version_switch(job=job, current=current, version=version)
        except BaseException:
            version_drop(version)
            imports_finish(current, ImportState.FAILED, "knowledge_error")
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
            store_changed()
    return KnowledgePack.objects.select_related("version").get(pack_id=prepared.pack.pack_id)


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
