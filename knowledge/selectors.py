"""Reads of the public knowledge store: what the routes, the browser page, the search and the
install folder show. Only installed versions (``KnowledgePack.version``) are ever read, so a version an
import is still building stays invisible."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from knowledge.install.selectors import knowledge_folder_problem
from knowledge.models import (
    ImportState,
    IndexBatch,
    KnowledgeChunk,
    KnowledgeEntry,
    KnowledgeImport,
    KnowledgePack,
    KnowledgeStore,
    QueryRecord,
)
from knowledge.packs import MATERIAL_TYPES, pack_id_is_valid, title_key
from knowledge.query_log import knowledge_query_log_flush
from nekomem import embeddings
from nekomem.runtime.state import is_ready

PREVIEW_CHARS = 180
STATUS_SOURCES = 12
ENTRIES_QUERY_CHARS = 200
DIAGNOSTICS_KEPT = 50
JOBS_KEPT = 50


def knowledge_ready() -> bool:
    """The store answers once the server finished its startup (migrations checked)."""
    return is_ready()


def knowledge_store() -> KnowledgeStore:
    store, _ = KnowledgeStore.objects.get_or_create(pk=1)
    return store


def knowledge_store_version() -> str:
    """What a cache of the store's contents is keyed on, ``"<entries>#<vectors>"``: it changes with every
    visible change; a lookup must see the first part and may lag behind the second (vectors filled)."""
    row = KnowledgeStore.objects.filter(pk=1).values_list("version", "vectors_version").first()
    entries, vectors = row if row is not None else (0, 0)
    return f"{entries}#{vectors}"


def knowledge_installed_packs(*, with_canonical: bool = False) -> QuerySet[KnowledgePack]:
    """The packs with the version that answers. A version's canonical bytes (up to 10 MiB a pack) are
    read only by who asks for them: the flags on every answer need none of them."""
    packs = KnowledgePack.objects.select_related("version").order_by("pack_id")
    return packs if with_canonical else packs.defer("version__canonical")


def _serves(pack: KnowledgePack) -> bool:
    return pack.version is not None and not pack.broken


def knowledge_availability() -> dict[str, bool]:
    """The three flags every answer carries (reference §1.8)."""
    ready = knowledge_ready()
    if not ready:
        return {"ready": False, "enabled": False, "tool_available": False}
    enabled = knowledge_store().enabled
    # Two columns, read lazily until a usable pack turns up: model instances of every pack (and its
    # version) cost ~30 ms an answer at the original's 200 packs.
    serving = KnowledgePack.objects.filter(version__isnull=False, broken=False).order_by("pack_id")
    usable = any(
        entries > len(disabled or [])
        for entries, disabled in serving.values_list("version__entries_total", "disabled_titles").iterator(
            chunk_size=50
        )
    )
    return {"ready": True, "enabled": enabled, "tool_available": enabled and usable}


# --- embeddings -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EmbeddingView:
    state: str  # ready / loading / disabled
    model_id: str  # the model whose vectors count, loaded or not; "" when vectors are off

    @property
    def api_model_id(self) -> str | None:
        return self.model_id if self.state == "ready" else None


def knowledge_embedding() -> EmbeddingView:
    """The kernel's embedding state; never loads the model."""
    status = embeddings.status()
    state = str(status.get("state", "disabled"))
    if state == "disabled":
        return EmbeddingView(state="disabled", model_id="")
    return EmbeddingView(state="ready" if state == "ready" else "loading", model_id=str(status["model_id"]))


# --- packs ----------------------------------------------------------------------------------------------


def _chunk_stats(model_id: str) -> dict[int, dict[str, int]]:
    rows = (
        KnowledgeChunk.objects.filter(version__installed_as__isnull=False)
        .values("version_id")
        .annotate(
            total=Count("id"),
            ready=Count("id", filter=Q(vector__isnull=False, model_id=model_id) if model_id else Q(pk=None)),
            failed=Count("id", filter=Q(failed=True)),
        )
    )
    return {
        row["version_id"]: {"total": row["total"], "ready": row["ready"], "failed": row["failed"]}
        for row in rows
    }


def vector_state(
    *, pack: KnowledgePack, total: int, ready: int, failed: int, indexing: bool, embedding: str
) -> str:
    if total <= 0:
        return "none"
    if not pack.local_embedding:  # policy first: vectors from before the switch are not used
        return "off"
    if ready >= total:
        return "complete"
    if not indexing:
        return "paused"
    if embedding != "ready":
        return "waiting"
    if ready + failed >= total:
        return "partial"
    return "building"


def _iso(value: Any) -> str:
    return timezone.localtime(value).isoformat() if value is not None else ""


def knowledge_packs_list() -> list[dict[str, Any]]:
    embedding = knowledge_embedding()
    stats = _chunk_stats(embedding.model_id)
    indexing = knowledge_store().enabled
    packs = []
    for pack in knowledge_installed_packs():
        version = pack.version
        chunk = stats.get(version.pk, {}) if version is not None else {}
        total, ready, failed = chunk.get("total", 0), chunk.get("ready", 0), chunk.get("failed", 0)
        entries = version.entries_total if version is not None else 0
        packs.append(
            {
                "pack_id": pack.pack_id,
                "source": {
                    "name": version.source_name if version else pack.pack_id,
                    "homepage": version.source_homepage if version else "",
                    "license": version.source_license if version else "",
                },
                "declared_material_type": version.declared_material_type if version else "knowledge",
                "material_type_override": pack.material_type_override or None,
                "effective_material_type": pack.effective_material_type,
                "entries": entries,
                "disabled_entries": len(pack.disabled_titles),
                "auto_context": pack.auto_context,
                "local_embedding": pack.local_embedding,
                "chunks_total": total,
                "chunks_ready": ready,
                "chunks_failed": failed,
                "vector_state": vector_state(
                    pack=pack,
                    total=total,
                    ready=ready,
                    failed=failed,
                    indexing=indexing,
                    embedding=embedding.state,
                ),
                "broken": pack.broken,
                "installed_at": _iso(pack.installed_at),
                "updated_at": _iso(pack.updated_at),
            }
        )
    return packs


def knowledge_status() -> dict[str, Any]:
    embedding = knowledge_embedding()
    availability = knowledge_availability()
    status: dict[str, Any] = {
        "state": "ready" if availability["ready"] else "starting",
        # The store keeps serving what it holds; its folder is what cannot be read.
        "error_code": knowledge_folder_problem() if availability["ready"] else "",
        "embedding": {"state": embedding.state, "model_id": embedding.api_model_id},
        **availability,
    }
    if not availability["ready"]:
        return status
    packs = knowledge_packs_list()
    by_type = {kind: [p for p in packs if p["effective_material_type"] == kind] for kind in MATERIAL_TYPES}
    # Keyword-only packs never get vectors: counting them would keep the overview below 100 %.
    vector_packs = [p for p in packs if p["local_embedding"]]
    chunks_total = sum(p["chunks_total"] for p in vector_packs)
    chunks_ready = sum(p["chunks_ready"] for p in vector_packs)
    status.update(
        {
            "packs": len(packs),
            "entries": sum(p["entries"] for p in packs),
            "disabled_entries": sum(p["disabled_entries"] for p in packs),
            "knowledge_packs": len(by_type["knowledge"]),
            "corpus_packs": len(by_type["corpus"]),
            "knowledge_entries": sum(p["entries"] for p in by_type["knowledge"]),
            "corpus_entries": sum(p["entries"] for p in by_type["corpus"]),
            "chunks_total": chunks_total,
            "chunks_ready": chunks_ready,
            "chunks_failed": sum(p["chunks_failed"] for p in vector_packs),
            "indexed_percent": round(chunks_ready * 100 / chunks_total, 1) if chunks_total else 0.0,
            "broken_packs": [p["pack_id"] for p in packs if p["broken"]],
            "sources": [
                {"pack_id": p["pack_id"], "name": p["source"]["name"], "entries": p["entries"]}
                for p in sorted(packs, key=lambda p: -p["entries"])[:STATUS_SOURCES]
            ],
        }
    )
    return status


# --- entries --------------------------------------------------------------------------------------------


def _entry_payload(entry: KnowledgeEntry, pack: KnowledgePack, *, detail: bool) -> dict[str, Any]:
    version = pack.version
    preview = " ".join(entry.content.split())
    payload: dict[str, Any] = {
        "pack_id": pack.pack_id,
        "title": entry.title,
        "terms": {"alias": list(entry.aliases), "recognition": list(entry.recognition)},
        "tags": list(entry.tags),
        "summary": entry.summary,
        "content_preview": preview[:PREVIEW_CHARS] + ("..." if len(preview) > PREVIEW_CHARS else ""),
        "material_type": pack.effective_material_type,
        "source": {
            "name": version.source_name if version else pack.pack_id,
            "homepage": version.source_homepage if version else "",
            "license": version.source_license if version else "",
        },
        "disabled": entry.title_key in set(pack.disabled_titles),
    }
    if detail:
        payload["content"] = entry.content
    return payload


def serving_packs(pack_id: str = "") -> dict[int, KnowledgePack]:
    packs = knowledge_installed_packs().filter(version__isnull=False, broken=False)
    if pack_id:
        packs = packs.filter(pack_id=pack_id)
    return {pack.version_id: pack for pack in packs if pack.version_id is not None}


def knowledge_entries_list(
    *, query: str = "", pack_id: str = "", limit: int = 50, offset: int = 0
) -> dict[str, Any]:
    """A page of entries (a query matches title, terms, summary or content; its total is not counted)."""
    query = query.strip()[:ENTRIES_QUERY_CHARS]
    packs = serving_packs(pack_id)
    entries = KnowledgeEntry.objects.filter(version_id__in=list(packs)).order_by(
        "version__pack_id", "ordinal"
    )
    if query:
        entries = entries.filter(
            Q(title__icontains=query)
            | Q(title_key__contains=title_key(query))
            | Q(summary__icontains=query)
            | Q(content__icontains=query)
        )
        rows = list(entries[offset : offset + limit + 1])
        has_more = len(rows) > limit
        rows = rows[:limit]
        total: int | None = None
    else:
        total = entries.count()
        rows = list(entries[offset : offset + limit])
        has_more = offset + len(rows) < total
    return {
        "total": total,
        "offset": offset,
        "limit": limit,
        "has_more": has_more,
        "items": [_entry_payload(entry, packs[entry.version_id], detail=False) for entry in rows],
    }


def knowledge_entry_get(*, pack_id: str, title: str) -> dict[str, Any] | None:
    if not pack_id_is_valid(pack_id):
        return None
    packs = serving_packs(pack_id)
    entry = KnowledgeEntry.objects.filter(version_id__in=list(packs), title_key=title_key(title)).first()
    return _entry_payload(entry, packs[entry.version_id], detail=True) if entry is not None else None


# --- jobs and diagnostics -------------------------------------------------------------------------------


def import_payload(job: KnowledgeImport) -> dict[str, Any]:
    return {
        "job_id": job.job_id,
        "pack_id": job.pack_id,
        "state": job.state,
        "reason": job.reason,
        "entries_total": job.entries_total,
        "chunks_total": job.chunks_total,
        "created_at": _iso(job.created_at),
        "updated_at": _iso(job.updated_at),
    }


def knowledge_jobs_list() -> list[dict[str, Any]]:
    jobs = KnowledgeImport.objects.defer("staged").order_by("-created_at", "-id")[:JOBS_KEPT]
    return [import_payload(job) for job in jobs]


def knowledge_imports_pending() -> QuerySet[KnowledgeImport]:
    return KnowledgeImport.objects.filter(state__in=[ImportState.QUEUED, ImportState.BUILDING])


def knowledge_diagnostics() -> dict[str, Any]:
    # Lookups record their rows off the answer: this process's own are written first, so a reader
    # always sees them.
    knowledge_query_log_flush()
    queries = QueryRecord.objects.order_by("-created_at", "-id")[:DIAGNOSTICS_KEPT]
    batches = IndexBatch.objects.order_by("-created_at", "-id")[:DIAGNOSTICS_KEPT]
    return {
        "queries": [
            {
                "timestamp": _iso(row.created_at),
                "mode": row.mode,
                "result": row.result,
                "retrieval_mode": row.retrieval_mode,
                "hits": row.hits,
                "entry_title": row.entry_title,
                "pack_id": row.pack_id,
                "elapsed_ms": row.elapsed_ms,
                "error_type": row.error_type,
            }
            for row in queries
        ],
        "index_batches": [
            {
                "timestamp": _iso(row.created_at),
                "model_id": row.model_id,
                "selected": row.selected,
                "stored": row.stored,
                "failed": row.failed,
                "elapsed_ms": row.elapsed_ms,
            }
            for row in batches
        ],
    }


# --- what the install folder and export read ------------------------------------------------------------


@dataclass(frozen=True)
class PackRecord:
    """A served pack as the original's ``registry.json`` describes it, with its canonical bytes."""

    pack_id: str
    sha256: str
    canonical: bytes
    declared_material_type: str
    material_type_override: str | None
    auto_context: bool
    local_embedding: bool
    disabled_titles: tuple[str, ...]
    entries: int
    chunks: int
    source_name: str
    source_homepage: str
    source_license: str
    installed_at: str
    updated_at: str


def knowledge_pack_records() -> list[PackRecord]:
    records = []
    for pack in knowledge_installed_packs(with_canonical=True).filter(version__isnull=False):
        version = pack.version
        assert version is not None
        records.append(
            PackRecord(
                pack_id=pack.pack_id,
                sha256=version.sha256,
                canonical=bytes(version.canonical),
                declared_material_type=version.declared_material_type,
                material_type_override=pack.material_type_override or None,
                auto_context=pack.auto_context,
                local_embedding=pack.local_embedding,
                disabled_titles=tuple(sorted(pack.disabled_titles)),
                entries=version.entries_total,
                chunks=version.chunks_total,
                source_name=version.source_name,
                source_homepage=version.source_homepage,
                source_license=version.source_license,
                installed_at=_iso(pack.installed_at),
                updated_at=_iso(pack.updated_at),
            )
        )
    return records
