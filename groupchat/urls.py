from django.urls import path

from groupchat import history_views, identity_views, scoped_views, trust_views

# Names are matched as paths so an encoded slash (``..%2Fetc``) reaches the name check and gets its
# JSON 400 instead of falling through to a 404.

urlpatterns = [
    # Group chat (reference §1.6): only the name is percent-encoded, so it may hold a decoded "/".
    path("internal/memory/<path:name>/scoped_facts", scoped_views.scoped_facts, name="scoped_facts"),
    path("internal/memory/<path:name>/scoped_history", history_views.scoped_history, name="scoped_history"),
    path("internal/memory/<path:name>/scoped_context", scoped_views.scoped_context, name="scoped_context"),
    path("internal/memory/<path:name>/scoped_mentions", scoped_views.scoped_mentions, name="scoped_mentions"),
    path("internal/memory/<path:name>/scoped_forget", scoped_views.scoped_forget_view, name="scoped_forget"),
    path("internal/memory/<path:name>/scoped_subjects", scoped_views.scoped_subjects, name="scoped_subjects"),
    path("internal/memory/<path:name>/forget_epochs", scoped_views.forget_epochs, name="forget_epochs"),
    # Identity and trust administration (reference §1.6): not tied to a character.
    path("internal/trust/profile", trust_views.trust_profile_view, name="trust_profile"),
    path(
        "internal/trust/import_legacy_profiles",
        trust_views.import_legacy_profiles,
        name="trust_import_legacy_profiles",
    ),
    path(
        "internal/trust/waive_legacy_barrier",
        trust_views.waive_legacy_barrier,
        name="trust_waive_legacy_barrier",
    ),
    path(
        "internal/trust/reconcile_from_facts",
        trust_views.reconcile_from_facts,
        name="trust_reconcile_from_facts",
    ),
    path("internal/identity/scope", identity_views.scope, name="identity_scope"),
    path(
        "internal/identity/accounts/ensure", identity_views.accounts_ensure, name="identity_accounts_ensure"
    ),
    path("internal/identity/accounts/bind", identity_views.accounts_bind, name="identity_accounts_bind"),
    path(
        "internal/identity/accounts/unbind", identity_views.accounts_unbind, name="identity_accounts_unbind"
    ),
    path(
        "internal/identity/entities/merge", identity_views.entities_merge_view, name="identity_entities_merge"
    ),
    path(
        "internal/identity/entities/forget", identity_views.entities_forget, name="identity_entities_forget"
    ),
]
