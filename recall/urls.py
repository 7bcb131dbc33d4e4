from django.urls import path

from recall import import_views, scoped_views, views

# Names are matched as paths so an encoded slash (``..%2Fetc``) reaches the name check and gets its
# JSON 400 instead of falling through to a 404.

urlpatterns = [
    path(
        "internal/memory/import_external_markdown",
        import_views.import_external_markdown,
        name="import_external_markdown",
    ),
    path("new_dialog/<path:name>", views.new_dialog, name="new_dialog"),
    path("query_memory/<path:name>", views.query_memory, name="query_memory"),
    path("search_for_memory/<str:name>/<path:query>", views.search_for_memory, name="search_for_memory"),
    # Group chat (reference §1.6): only the name is percent-encoded, so it may hold a decoded "/".
    path("internal/memory/<path:name>/scoped_facts", scoped_views.scoped_facts, name="scoped_facts"),
    path("internal/memory/<path:name>/scoped_history", scoped_views.scoped_history, name="scoped_history"),
    path("internal/memory/<path:name>/scoped_context", scoped_views.scoped_context, name="scoped_context"),
    path("internal/memory/<path:name>/scoped_mentions", scoped_views.scoped_mentions, name="scoped_mentions"),
    path("internal/memory/<path:name>/scoped_forget", scoped_views.scoped_forget_view, name="scoped_forget"),
    path("internal/memory/<path:name>/scoped_subjects", scoped_views.scoped_subjects, name="scoped_subjects"),
    path("internal/memory/<path:name>/forget_epochs", scoped_views.forget_epochs, name="forget_epochs"),
]
