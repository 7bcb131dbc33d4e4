"""The 17 routes of reference §1.8, under ``/internal/knowledge``."""

from django.urls import path

from knowledge import views

urlpatterns = [
    path("internal/knowledge/query", views.query, name="knowledge-query"),
    path("internal/knowledge/availability", views.availability, name="knowledge-availability"),
    path("internal/knowledge/status", views.status, name="knowledge-status"),
    path("internal/knowledge/entries", views.entries, name="knowledge-entries"),
    path("internal/knowledge/entry", views.entry, name="knowledge-entry"),
    path("internal/knowledge/packs", views.packs, name="knowledge-packs"),
    path("internal/knowledge/packs/jobs", views.jobs, name="knowledge-jobs"),
    path("internal/knowledge/diagnostics/recent", views.diagnostics, name="knowledge-diagnostics"),
    path("internal/knowledge/settings", views.settings_set, name="knowledge-settings"),
    path("internal/knowledge/packs/import", views.pack_import, name="knowledge-import"),
    path("internal/knowledge/packs/jobs/cancel", views.job_cancel, name="knowledge-job-cancel"),
    path("internal/knowledge/packs/jobs/discard", views.job_discard, name="knowledge-job-discard"),
    path("internal/knowledge/entry/disabled", views.entry_disabled, name="knowledge-entry-disabled"),
    path("internal/knowledge/packs/auto-context", views.pack_auto_context, name="knowledge-auto-context"),
    path("internal/knowledge/packs/index-policy", views.pack_index_policy, name="knowledge-index-policy"),
    path("internal/knowledge/packs/material-type", views.pack_material_type, name="knowledge-material-type"),
    path("internal/knowledge/packs/remove", views.pack_remove, name="knowledge-remove"),
]
