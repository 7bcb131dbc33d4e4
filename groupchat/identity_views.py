"""Identity administration (reference §1.6): the scope of an account, linking accounts to a person,
merging and forgetting people. Not tied to a character; errors are ``{"detail": …}``; every answer
carries ``persisted`` (true: written; null: nothing to write; false: the write failed)."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from groupchat.identity.selectors import entity_accounts, entity_of, identity_scope
from groupchat.identity.services import (
    UnknownIdentity,
    account_bind,
    account_ensure,
    account_unbind,
    entities_merge,
)
from groupchat.requests import (
    Unprocessable,
    account_id_field,
    entity_id_field,
    ledger_route,
    ok,
    request_body,
)
from groupchat.services import identity_entity_forget, identity_stranded_rows

logger = logging.getLogger(__name__)


@csrf_exempt
@require_POST
@ledger_route
def scope(request: HttpRequest) -> HttpResponse:
    return ok(identity_scope(account_id=account_id_field(request_body(request).get("account_id"))))


@csrf_exempt
@require_POST
@ledger_route
def accounts_ensure(request: HttpRequest) -> HttpResponse:
    account, created = account_ensure(account_id=account_id_field(request_body(request).get("account_id")))
    return ok(
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
@ledger_route
def accounts_bind(request: HttpRequest) -> HttpResponse:
    body = request_body(request)
    account_id = account_id_field(body.get("account_id"))
    if body.get("to_account_id") is not None:
        to_account = account_id_field(body.get("to_account_id"), "to_account_id")
        entity = entity_of(to_account)
        target = (
            entity.entity_id
            if entity is not None
            else account_ensure(account_id=to_account)[0].entity.entity_id
        )
    else:
        target = entity_id_field(body.get("entity_id"))
    if body.get("to_account_id") is None and body.get("entity_id") is None:
        raise Unprocessable("bind needs entity_id or to_account_id")
    account, changed = account_bind(account_id=account_id, entity_id=target)
    return ok(
        {
            "persisted": True if changed else None,
            "account_id": account.account_id,
            "entity_id": target,
            "accounts": _accounts(target),
        }
    )


@csrf_exempt
@require_POST
@ledger_route
def accounts_unbind(request: HttpRequest) -> HttpResponse:
    account_id = account_id_field(request_body(request).get("account_id"))
    account, former, changed = account_unbind(account_id=account_id)
    return ok(
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
@ledger_route
def entities_merge_view(request: HttpRequest) -> HttpResponse:
    body = request_body(request)
    source = entity_id_field(body.get("entity_id"))
    target = entity_id_field(body.get("into_entity_id"), "into_entity_id")
    moved = entities_merge(entity_id=source, into_entity_id=target)
    return ok(
        {
            "persisted": True if moved else None,
            "entity_id": target,
            "merged_accounts": moved,
            "accounts": _accounts(target),
        }
    )


@csrf_exempt
@require_POST
@ledger_route
def entities_forget(request: HttpRequest) -> HttpResponse:
    body = request_body(request)
    if body.get("account_id") is not None:
        entity = entity_of(account_id_field(body.get("account_id")))
        if entity is None:
            raise UnknownIdentity("unknown account")
        entity_id = entity.entity_id
    else:
        entity_id = entity_id_field(body.get("entity_id"))
    if not entity_accounts(entity_id=entity_id).exists():
        raise UnknownIdentity(f"unknown entity {entity_id}")
    report = identity_entity_forget(entity_id=entity_id)
    logger.info("entities/forget: %d accounts, %d characters", len(report.accounts), report.characters)
    return ok(
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
