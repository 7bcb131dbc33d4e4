"""Trust administration (reference §1.6): not tied to a character; the group plugin calls them with the
shared secret like every ``/internal/`` route. Errors are ``{"detail": …}``; every answer carries
``persisted`` (true: written; null: nothing to write; false: the write failed)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from groupchat.identity.selectors import trust_profile
from groupchat.identity.services import legacy_barrier_waive, legacy_profiles_import
from groupchat.identity.trust import LEGACY_IMPORT_CHUNK_MAX, normalize_platform, valid_source
from groupchat.requests import Unprocessable, account_id_field, ledger_route, ok, request_body
from groupchat.services import identity_reconcile_from_facts


@require_GET
@ledger_route
def trust_profile_view(request: HttpRequest) -> HttpResponse:
    return ok(trust_profile(account_id=account_id_field(request.GET.get("account_id"))))


@csrf_exempt
@require_POST
@ledger_route
def import_legacy_profiles(request: HttpRequest) -> HttpResponse:
    body = request_body(request)
    platform = normalize_platform(body.get("platform"))
    if platform is None:
        raise Unprocessable("platform must match [A-Za-z0-9_.-]+")
    source = valid_source(body.get("source"))
    if source is None:
        raise Unprocessable("source must be 1..128 characters of [A-Za-z0-9_.:-]")
    profiles = body.get("profiles", {})
    if not isinstance(profiles, dict) or len(profiles) > LEGACY_IMPORT_CHUNK_MAX:
        raise Unprocessable(f"profiles must be an object of at most {LEGACY_IMPORT_CHUNK_MAX} profiles")
    final = body.get("final", False)
    if not isinstance(final, bool):
        raise Unprocessable("final must be a boolean")
    result = legacy_profiles_import(platform=platform, source=source, profiles=profiles, final=final)
    return ok(
        {
            "persisted": True,
            "platform": platform,
            "imported": result.imported,
            "skipped": result.skipped,
            "barrier": result.barrier,
        }
    )


@csrf_exempt
@require_POST
@ledger_route
def waive_legacy_barrier(request: HttpRequest) -> HttpResponse:
    platform = normalize_platform(request_body(request).get("platform"))
    if platform is None:
        raise Unprocessable("platform must match [A-Za-z0-9_.-]+")
    status, changed = legacy_barrier_waive(platform=platform)
    return ok({"persisted": True if changed else None, "platform": platform, "barrier": status})


@csrf_exempt
@require_POST
@ledger_route
def reconcile_from_facts(request: HttpRequest) -> HttpResponse:
    request_body(request)
    counts = identity_reconcile_from_facts()
    return ok({"persisted": True if counts["accounts_created"] else None, **counts})
