"""The user's state of each pack (enabled, auto context, local embedding, material type, disabled
entries), and packs removed or marked broken."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from knowledge import selectors
from knowledge.models import (
    ImportState,
    KnowledgeChunk,
    KnowledgeEntry,
    KnowledgeImport,
    KnowledgePack,
    KnowledgeStore,
    PackVersion,
)
from knowledge.packs import (
    MATERIAL_TYPES,
    title_key,
)
from knowledge.services.imports import imports_finish
from knowledge.services.store import (
    SWITCH_WAIT_SECONDS,
    KnowledgeRefused,
    store_changed,
    store_write,
)
from knowledge.services.vectors import vectors_enqueue


def _pack(pack_id: str) -> KnowledgePack:
    pack = KnowledgePack.objects.select_related("version").filter(pack_id=pack_id).first()
    if pack is None:
        raise KnowledgeRefused("not_found")
    return pack


def knowledge_enabled_set(*, enabled: bool) -> dict[str, Any]:
    with store_write():
        selectors.knowledge_store()
        KnowledgeStore.objects.filter(pk=1).update(enabled=enabled)
        store_changed()
    if enabled:
        transaction.on_commit(vectors_enqueue)
    return {"enabled": enabled}


def knowledge_pack_auto_context_set(*, pack_id: str, enabled: bool) -> dict[str, Any]:
    with store_write():
        pack = _pack(pack_id)
        KnowledgePack.objects.filter(pk=pack.pk).update(auto_context=enabled, updated_at=timezone.now())
        store_changed()
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
            transaction.on_commit(vectors_enqueue)
        store_changed()
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
        store_changed()
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
        store_changed()
    return {"pack_id": pack_id, "disabled": disabled, "disabled_entries": len(keys)}


def knowledge_pack_remove(*, pack_id: str) -> dict[str, Any]:
    with store_write():
        pack = _pack(pack_id)
        removed = pack.version.entries_total if pack.version is not None else 0
        imports_finish(
            KnowledgeImport.objects.filter(pack_id=pack_id, state=ImportState.QUEUED), ImportState.CANCELLED
        )
        version_id = pack.version_id
        pack.delete()
        if version_id is not None:
            PackVersion.objects.filter(pk=version_id).delete()
        store_changed()
    return {"pack_id": pack_id, "removed_entries": removed}


def knowledge_store_clear() -> int:
    """Every pack, its state and every import gone (an import of a whole memory folder replaces the
    store). Returns the number of packs removed."""
    with store_write(wait=SWITCH_WAIT_SECONDS):
        removed = KnowledgePack.objects.count()
        KnowledgePack.objects.all().delete()
        PackVersion.objects.all().delete()
        KnowledgeImport.objects.all().delete()
        store_changed()
    return removed


@dataclass(frozen=True)
class PackState:
    """The user's state of a pack, as the install folder's ``registry.json`` keeps it."""

    material_type_override: str | None = None
    auto_context: bool = False
    local_embedding: bool = True
    disabled_titles: tuple[str, ...] = ()


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
        store_changed()
