from django.contrib import admin

from knowledge.models import (
    IndexBatch,
    KnowledgeChunk,
    KnowledgeEntry,
    KnowledgeImport,
    KnowledgePack,
    KnowledgeStore,
    PackVersion,
    QueryRecord,
)


@admin.register(KnowledgeStore)
class KnowledgeStoreAdmin(admin.ModelAdmin):
    list_display = ("id", "enabled", "version", "updated_at")


@admin.register(KnowledgePack)
class KnowledgePackAdmin(admin.ModelAdmin):
    list_display = ("pack_id", "version", "material_type_override", "local_embedding", "broken", "updated_at")
    search_fields = ("pack_id",)
    raw_id_fields = ("version",)


@admin.register(PackVersion)
class PackVersionAdmin(admin.ModelAdmin):
    list_display = (
        "pack_id",
        "sha256",
        "declared_material_type",
        "entries_total",
        "chunks_total",
        "created_at",
    )
    search_fields = ("pack_id",)
    exclude = ("canonical",)


@admin.register(KnowledgeEntry)
class KnowledgeEntryAdmin(admin.ModelAdmin):
    list_display = ("title", "version", "ordinal")
    search_fields = ("title", "title_key")
    raw_id_fields = ("version",)


@admin.register(KnowledgeChunk)
class KnowledgeChunkAdmin(admin.ModelAdmin):
    list_display = ("id", "entry", "ordinal", "model_id", "attempts", "failed")
    list_filter = ("failed",)
    raw_id_fields = ("version", "entry")
    exclude = ("vector",)


@admin.register(KnowledgeImport)
class KnowledgeImportAdmin(admin.ModelAdmin):
    list_display = ("job_id", "pack_id", "state", "reason", "status", "created_at")
    list_filter = ("state", "status")
    exclude = ("staged",)
    raw_id_fields = ("building",)


@admin.register(QueryRecord)
class QueryRecordAdmin(admin.ModelAdmin):
    list_display = ("created_at", "mode", "result", "retrieval_mode", "hits", "elapsed_ms")


@admin.register(IndexBatch)
class IndexBatchAdmin(admin.ModelAdmin):
    list_display = ("created_at", "model_id", "selected", "stored", "failed", "elapsed_ms")
