"""Recall's own store in the admin: written by the embedding backfill and the pairs pass only."""

from __future__ import annotations

import base64

from django.contrib import admin

from nekomem.admin import ServiceWrittenAdmin
from recall.models import PairsCursor, RawTurnVector


@admin.register(RawTurnVector)
class RawTurnVectorAdmin(ServiceWrittenAdmin):
    list_display = ("raw", "character", "embedding_model_id", "dimensions")
    list_filter = ("embedding_model_id",)
    search_fields = ("character__name", "embedding_model_id")
    list_select_related = ("character",)
    raw_id_fields = ("raw",)
    exclude = ("embedding",)  # base64 of a float16 vector: its size says what matters
    readonly_fields = ("dimensions",)
    show_full_result_count = False

    @admin.display(description="dimensions")
    def dimensions(self, obj: RawTurnVector) -> int:
        return len(base64.b64decode(obj.embedding)) // 2 if obj.embedding else 0  # float16


@admin.register(PairsCursor)
class PairsCursorAdmin(ServiceWrittenAdmin):
    list_display = ("character", "through_version")
    search_fields = ("character__name",)
    list_select_related = ("character",)
