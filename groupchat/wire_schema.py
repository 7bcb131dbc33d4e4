"""The group chat routes in the OpenAPI schema: scoped, trust and identity."""

from __future__ import annotations

from nekomem.wire_schema import NAME_PARAMETER, TEXT, Json, json_response, operation, register

GROUPCHAT_TAG = "group chat, identity and trust (wire)"

COMPONENTS: dict[str, Json] = {
    "IdentityAnswer": {
        "type": "object",
        "description": "The route's fields (listed in its summary) and persisted: true written, null "
        "nothing to write, false the write failed.",
        "properties": {"persisted": {"type": "boolean", "nullable": True}},
        "additionalProperties": True,
    },
    "IdentityRefusal": {
        "type": "object",
        "properties": {"detail": {"type": "string"}, "persisted": {"type": "boolean", "nullable": True}},
        "required": ["detail"],
    },
}

IDENTITY_ERRORS: dict[str, Json] = {
    "404": json_response("IdentityRefusal", "unknown account or entity"),
    "409": json_response("IdentityRefusal", "beyond the link limit"),
    "422": json_response("IdentityRefusal", "the body or query is not what the route takes"),
    "503": json_response("IdentityRefusal", "the ledger could not be written (persisted: false); retry"),
}


def _scoped(route: str, method: str, summary: str, query: list[Json]) -> Json:
    return {
        method: operation(
            f"wire_{route}",
            summary,
            {"200": TEXT if route == "scoped_context" else json_response("WireObject", "answer")},
            body=None if method == "get" else "WireObject",
            parameters=[NAME_PARAMETER] if method == "post" else [NAME_PARAMETER, *query],
            secret=True,
            tag=GROUPCHAT_TAG,
        )
    }


def _identity(method: str, operation_id: str, summary: str, query: list[Json] | None = None) -> Json:
    return {
        method: operation(
            operation_id,
            summary,
            {"200": json_response("IdentityAnswer", "done"), **IDENTITY_ERRORS},
            body="WireObject" if method == "post" else None,
            body_required=False,
            parameters=query or [],
            secret=True,
            tag=GROUPCHAT_TAG,
        )
    }


SUBJECT_QUERY: Json = {
    "name": "subject",
    "in": "query",
    "schema": {"type": "array", "items": {"type": "string"}},
}
PLATFORM_QUERY: Json = {"name": "platform", "in": "query", "required": True, "schema": {"type": "string"}}
ACCOUNT_QUERY: Json = {"name": "account_id", "in": "query", "required": True, "schema": {"type": "string"}}

PATHS: dict[str, Json] = {
    "/internal/memory/{name}/scoped_facts": _scoped(
        "scoped_facts", "post", "Group chat: store {subject, facts (1..32), language?, display_name?}", []
    ),
    "/internal/memory/{name}/scoped_history": _scoped(
        "scoped_history",
        "post",
        "Group chat: extract facts about {subject} from {input_history, speaker_label?, speaker_id?, "
        "display_name?, language?}; 502 when extraction fails (keep the buffer and retry)",
        [],
    ),
    "/internal/memory/{name}/scoped_context": _scoped(
        "scoped_context", "post", "Group chat: persona and reflections of {subjects (1..8)}, text/plain", []
    ),
    "/internal/memory/{name}/scoped_mentions": _scoped(
        "scoped_mentions", "post", "Group chat: count mentions {response_text, subjects}", []
    ),
    "/internal/memory/{name}/scoped_forget": _scoped(
        "scoped_forget", "post", "Group chat: erase {subject, forget_epoch?} everywhere; idempotent", []
    ),
    "/internal/memory/{name}/scoped_subjects": _scoped(
        "scoped_subjects", "get", "Group chat: the subjects of one platform", [PLATFORM_QUERY]
    ),
    "/internal/memory/{name}/forget_epochs": _scoped(
        "forget_epochs", "get", "Group chat: forget tombstones of subject keys", [SUBJECT_QUERY]
    ),
    "/internal/trust/profile": _identity(
        "get",
        "wire_trust_profile",
        "A diagnostic view of one {account_id} (<platform>:<actor>)",
        [ACCOUNT_QUERY],
    ),
    "/internal/trust/import_legacy_profiles": _identity(
        "post",
        "wire_trust_import_legacy_profiles",
        "Import a chunk of the plugin's old profiles {platform, source, profiles, final?}: "
        "{persisted, platform, imported, skipped, barrier}",
    ),
    "/internal/trust/waive_legacy_barrier": _identity(
        "post",
        "wire_trust_waive_legacy_barrier",
        "Give up waiting for the legacy import of {platform}: {persisted, platform, barrier}",
    ),
    "/internal/trust/reconcile_from_facts": _identity(
        "post",
        "wire_trust_reconcile_from_facts",
        "Create the accounts the stored subjects name: {persisted, accounts_created, …counts}",
    ),
    "/internal/identity/scope": _identity(
        "post",
        "wire_identity_scope",
        "Where {account_id}'s memories fold: {account_id, platform, known, entity_id, accounts, "
        "canonical_account_id, subject}",
    ),
    "/internal/identity/accounts/ensure": _identity(
        "post",
        "wire_identity_accounts_ensure",
        "Create {account_id} with a person of its own: {persisted, created, account_id, entity_id}",
    ),
    "/internal/identity/accounts/bind": _identity(
        "post",
        "wire_identity_accounts_bind",
        "Link {account_id} to {entity_id} or to {to_account_id}'s person: "
        "{persisted, account_id, entity_id, accounts}",
    ),
    "/internal/identity/accounts/unbind": _identity(
        "post",
        "wire_identity_accounts_unbind",
        "Give {account_id} a person of its own again: "
        "{persisted, account_id, entity_id, former_entity_id, stranded_rows}",
    ),
    "/internal/identity/entities/merge": _identity(
        "post",
        "wire_identity_entities_merge",
        "Move every account of {entity_id} to {into_entity_id}: "
        "{persisted, entity_id, merged_accounts, accounts}",
    ),
    "/internal/identity/entities/forget": _identity(
        "post",
        "wire_identity_entities_forget",
        "Forget a person ({entity_id} or {account_id}) and what every character keeps about them: "
        "{persisted, status, entity_id, forgotten_accounts, forgotten_subjects, characters, …counts}",
    ),
}

register(__name__, paths=PATHS, components=COMPONENTS)
