"""Reads of the speaker-trust ledger."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from groupchat.identity.models import Account, Entity, TrustBarrier
from groupchat.identity.trust import LEGACY_BARRIERS, account_platform, effective_trust


def barrier_status(platform: str) -> str:
    """``pending``, ``cleared``, ``waived``, or ``none`` for a platform that never had legacy trust."""
    row = TrustBarrier.objects.filter(platform=platform).values_list("status", flat=True).first()
    if row is not None:
        return row
    return TrustBarrier.Status.PENDING if platform in LEGACY_BARRIERS else "none"


def barrier_pending(platform: str) -> bool:
    return barrier_status(platform) == TrustBarrier.Status.PENDING


def entity_accounts(*, entity_id: str) -> QuerySet[Account]:
    return Account.objects.filter(entity__entity_id=entity_id).order_by("bound_at", "pk")


def linked_accounts(*, account_id: str) -> list[str]:
    """The same person's other accounts on the same platform (never another platform's)."""
    account = Account.objects.filter(account_id=account_id).select_related("entity").first()
    if account is None:
        return []
    return list(
        Account.objects.filter(entity=account.entity, platform=account.platform)
        .exclude(pk=account.pk)
        .order_by("bound_at", "pk")
        .values_list("account_id", flat=True)
    )


def account_trust(account: Account) -> float | None:
    return effective_trust(
        tier=account.tier or None,
        base=account.base_trust,
        is_owner=account.is_owner,
        adjustment=account.adjustment,
        message_count=account.message_count,
    )


def trust_profile(*, account_id: str) -> dict[str, Any]:
    """A diagnostic view of one account (never the whole ledger)."""
    platform = account_platform(account_id)
    account = Account.objects.filter(account_id=account_id).select_related("entity").first()
    answer: dict[str, Any] = {
        "account_id": account_id,
        "platform": platform,
        "known": account is not None,
        "barrier": barrier_status(platform),
        "persisted": None,
    }
    if account is None:
        return {**answer, "entity_id": None, "resolved": None, "linked_accounts": []}
    return {
        **answer,
        "entity_id": account.entity.entity_id,
        "resolved": account_trust(account),
        "tier": account.tier or None,
        "base_trust": account.base_trust,
        "is_owner": account.is_owner,
        "adjustment": account.adjustment,
        "message_count": account.message_count,
        "activity_events": account.activity_events.count(),
        "channels": list(account.channels or []),
        "legacy_source": account.legacy_source or None,
        "linked_accounts": linked_accounts(account_id=account_id),
        "updated_at": account.updated_at.isoformat(),
    }


def identity_scope(*, account_id: str) -> dict[str, Any]:
    """Where an account's memories fold: the canonical (first bound) account of its entity on its
    platform, as a ``participant`` subject; the account itself when the ledger does not know it."""
    platform = account_platform(account_id)
    account = Account.objects.filter(account_id=account_id).select_related("entity").first()
    accounts = (
        list(
            Account.objects.filter(entity=account.entity, platform=platform)
            .order_by("bound_at", "pk")
            .values_list("account_id", flat=True)
        )
        if account is not None
        else [account_id]
    )
    canonical = accounts[0]
    return {
        "account_id": account_id,
        "platform": platform,
        "known": account is not None,
        "entity_id": account.entity.entity_id if account is not None else None,
        "accounts": accounts,
        "canonical_account_id": canonical,
        "subject": {
            "subject_kind": "participant",
            "subject_id": canonical,
            "scope": f"participant:{canonical}",
        },
        "persisted": None,
    }


def entity_of(account_id: str) -> Entity | None:
    account = Account.objects.filter(account_id=account_id).select_related("entity").first()
    return account.entity if account else None
