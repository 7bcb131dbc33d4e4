"""Identity and trust administration (reference §1.6): not tied to a character; the group plugin
calls them with the shared secret like every ``/internal/`` route. Errors are ``{"detail": …}``;
every answer carries ``persisted`` (true: written; null: nothing to write; false: the write failed)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from groupchat.identity.selectors import entity_accounts, entity_of, identity_scope, trust_profile
from groupchat.identity.services import (
    LinkLimit,
    UnknownIdentity,
    account_bind,
    account_ensure,
    account_unbind,
    entities_merge,
    legacy_barrier_waive,
    legacy_profiles_import,
)
from groupchat.identity.trust import (
    LEGACY_IMPORT_CHUNK_MAX,
    normalize_account_id,
    normalize_platform,
    valid_source,
)
from groupchat.services.identity import (
    identity_entity_forget,
    identity_reconcile_from_facts,
    identity_stranded_rows,
)

logger = logging.getLogger(__name__)
View = Callable[[HttpRequest], HttpResponse]


class Unprocessable(ValueError):
    pass


def _answer(body: dict[str, Any], status: int = 200) -> JsonResponse:
    return JsonResponse(body, status=status, json_dumps_params={"ensure_ascii": False})


def _detail(message: str, status: int = 422, **more: Any) -> JsonResponse:
    return _answer({"detail": message, **more}, status=status)


def _body(request: HttpRequest) -> dict[str, Any]:
    try:
        body = json.loads(request.body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise Unprocessable(f"body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise Unprocessable("body must be a JSON object")
    return body


def _account_id(raw: Any, name: str = "account_id") -> str:
    account_id = normalize_account_id(raw)
    if account_id is None:
        raise Unprocessable(f"{name} must be <platform>:<actor> (a stable id, at most 96 characters)")
    return account_id


def _entity_id(raw: Any, name: str = "entity_id") -> str:
    if not isinstance(raw, str) or not 1 <= len(raw.strip()) <= 40:
        raise Unprocessable(f"{name} must be an entity id")
    return raw.strip()


def _guarded(view: Callable[..., HttpResponse]) -> View:
    """422 for a bad request, 404 for an unknown id, 409 beyond the link limit, 503 (persisted
    false) when the ledger cannot be written."""

    @wraps(view)
    def wrapped(request: HttpRequest) -> HttpResponse:
        try:
            return view(request)
        except Unprocessable as exc:
            return _detail(str(exc))
        except UnknownIdentity as exc:
            return _detail(str(exc), status=404, persisted=None)
        except LinkLimit as exc:
            return _detail(str(exc), status=409, persisted=None)
        except DatabaseError:
            logger.exception("identity: the ledger write failed")
            return _detail("the ledger could not be written; retry", status=503, persisted=False)

    return wrapped


@require_GET
@_guarded
def trust_profile_view(request: HttpRequest) -> HttpResponse:
    return _answer(trust_profile(account_id=_account_id(request.GET.get("account_id"))))


@csrf_exempt
@require_POST
@_guarded
def import_legacy_profiles(request: HttpRequest) -> HttpResponse:
    body = _body(request)
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
    return _answer(
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
@_guarded
def waive_legacy_barrier(request: HttpRequest) -> HttpResponse:
    platform = normalize_platform(_body(request).get("platform"))
    if platform is None:
        raise Unprocessable("platform must match [A-Za-z0-9_.-]+")
    status, changed = legacy_barrier_waive(platform=platform)
    return _answer({"persisted": True if changed else None, "platform": platform, "barrier": status})


@csrf_exempt
@require_POST
@_guarded
def reconcile_from_facts(request: HttpRequest) -> HttpResponse:
    _body(request)
    counts = identity_reconcile_from_facts()
    return _answer({"persisted": True if counts["accounts_created"] else None, **counts})


@csrf_exempt
@require_POST
@_guarded
def scope(request: HttpRequest) -> HttpResponse:
    return _answer(identity_scope(account_id=_account_id(_body(request).get("account_id"))))


@csrf_exempt
@require_POST
@_guarded
def accounts_ensure(request: HttpRequest) -> HttpResponse:
    account, created = account_ensure(account_id=_account_id(_body(request).get("account_id")))
    return _answer(
        {
            "persisted": True if created else None,
            "created": created,
            "account_id": account.account_id,
            "entity_id": account.entity.entity_id,
        }
    )


def _accounts(entity_id: str) -> list[str]:
    return list(entity_accounts(entity_id=entity_id).values_list("account_id", flat=True))


@csrf_exempt
@require_POST
@_guarded
def accounts_bind(request: HttpRequest) -> HttpResponse:
    body = _body(request)
    account_id = _account_id(body.get("account_id"))
    if body.get("to_account_id") is not None:
        to_account = _account_id(body.get("to_account_id"), "to_account_id")
        entity = entity_of(to_account)
        target = (
            entity.entity_id
            if entity is not None
            else account_ensure(account_id=to_account)[0].entity.entity_id
        )
    else:
        target = _entity_id(body.get("entity_id"))
    if body.get("to_account_id") is None and body.get("entity_id") is None:
        raise Unprocessable("bind needs entity_id or to_account_id")
    account, changed = account_bind(account_id=account_id, entity_id=target)
    return _answer(
        {
            "persisted": True if changed else None,
            "account_id": account.account_id,
            "entity_id": target,
            "accounts": _accounts(target),
        }
    )


@csrf_exempt
@require_POST
@_guarded
def accounts_unbind(request: HttpRequest) -> HttpResponse:
    account_id = _account_id(_body(request).get("account_id"))
    account, former, changed = account_unbind(account_id=account_id)
    return _answer(
        {
            "persisted": True if changed else None,
            "account_id": account.account_id,
            "entity_id": account.entity.entity_id,
            "former_entity_id": former,
            # What the account said that stays with the person's other accounts' subjects.
            "stranded_rows": identity_stranded_rows(account_id=account_id) if changed else 0,
        }
    )


@csrf_exempt
@require_POST
@_guarded
def entities_merge_view(request: HttpRequest) -> HttpResponse:
    body = _body(request)
    source = _entity_id(body.get("entity_id"))
    target = _entity_id(body.get("into_entity_id"), "into_entity_id")
    moved = entities_merge(entity_id=source, into_entity_id=target)
    return _answer(
        {
            "persisted": True if moved else None,
            "entity_id": target,
            "merged_accounts": moved,
            "accounts": _accounts(target),
        }
    )


@csrf_exempt
@require_POST
@_guarded
def entities_forget(request: HttpRequest) -> HttpResponse:
    body = _body(request)
    if body.get("account_id") is not None:
        entity = entity_of(_account_id(body.get("account_id")))
        if entity is None:
            raise UnknownIdentity("unknown account")
        entity_id = entity.entity_id
    else:
        entity_id = _entity_id(body.get("entity_id"))
    if entity_of_id_missing(entity_id):
        raise UnknownIdentity(f"unknown entity {entity_id}")
    report = identity_entity_forget(entity_id=entity_id)
    logger.info("entities/forget: %d accounts, %d characters", len(report.accounts), report.characters)
    return _answer(
        {
            "persisted": True,
            "status": "forgotten",
            "entity_id": entity_id,
            "forgotten_accounts": report.accounts,
            "forgotten_subjects": report.forgotten_subjects,
            "characters": report.characters,
            **report.counts,
        }
    )


def entity_of_id_missing(entity_id: str) -> bool:
    return not entity_accounts(entity_id=entity_id).exists()
