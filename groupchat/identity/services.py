"""Writes of the speaker-trust ledger and of account links (reference §1.6, §2.15)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import DatabaseError, transaction
from django.db.models import Count
from django.utils import timezone

from groupchat.identity.models import Account, ActivityEvent, Entity, TrustBarrier
from groupchat.identity.selectors import barrier_pending, entity_accounts
from groupchat.identity.trust import (
    GATED_LEGACY,
    LINKED_ACCOUNTS_MAX,
    TrustInput,
    TrustOutcome,
    account_platform,
    derived_entity_id,
    effective_trust,
    normalize_account_id,
)
from nekomem.characters.locks import lock_rows

logger = logging.getLogger(__name__)


class LinkLimit(Exception):
    """More than ``LINKED_ACCOUNTS_MAX`` accounts of one platform in one entity (a 409)."""


class UnknownIdentity(LookupError):
    """An account or entity the ledger does not know (a 404)."""


def _entity_for(account_id: str, now: datetime) -> Entity:
    entity, _ = Entity.objects.get_or_create(
        entity_id=derived_entity_id(account_id), defaults={"created_at": now}
    )
    return entity


def account_ensure(*, account_id: str, now: datetime | None = None) -> tuple[Account, bool]:
    """The account's ledger row, created (in an entity of its own) when new."""
    now = now or timezone.now()
    with transaction.atomic():
        existing = Account.objects.filter(account_id=account_id).first()
        if existing is not None:
            return existing, False
        account = Account.objects.create(
            account_id=account_id,
            platform=account_platform(account_id),
            entity=_entity_for(account_id, now),
            bound_at=now,
            updated_at=now,
        )
    return account, True


def _stamp(account: Account | None, item: TrustInput) -> float | None:
    """The trust stamped on this request's facts: the ledger as it was before this request's events."""
    return effective_trust(
        tier=item.tier,
        base=item.base,
        is_owner=item.is_owner,
        adjustment=account.adjustment if account else 0.0,
        message_count=account.message_count if account else 0,
    )


def speaker_trust_resolve(*, inputs: list[TrustInput | None]) -> list[TrustOutcome]:
    """What each segment's facts are stamped with, read once at the start of a request (so one
    segment's events never change another's stamp). Legacy values are stamped as given and write
    nothing; a server source on a platform whose legacy barrier is pending is gated (nothing stamped,
    nothing counted)."""
    outcomes = [TrustOutcome() for _ in inputs]
    ids = sorted({item.account_id for item in inputs if item is not None and item.account_id})
    before = {a.account_id: a for a in Account.objects.filter(account_id__in=ids)}
    for outcome, item in zip(outcomes, inputs, strict=True):
        if item is None:
            continue
        if not item.server:
            outcome.resolved = item.legacy
        elif barrier_pending(account_platform(item.account_id or "")):
            outcome.gated = GATED_LEGACY
        else:
            outcome.resolved = _stamp(before.get(item.account_id or ""), item)
    return outcomes


def speaker_trust_record(
    *, inputs: list[TrustInput | None], outcomes: list[TrustOutcome], now: datetime | None = None
) -> None:
    """Record the server-derived trust of the resolved segments, in one transaction for the request:
    each account's source, and each activity event id not counted before. Sets ``persisted`` (true,
    or false when the write failed, so the caller keeps its buffer; a retry is safe because events
    count once); segments with nothing to write keep null. Never raises."""
    now = now or timezone.now()
    server = [
        (outcome, item)
        for outcome, item in zip(outcomes, inputs, strict=True)
        if item is not None and item.server and outcome.gated is None
    ]
    if not server:
        return
    ids = sorted({item.account_id for _, item in server if item.account_id})
    try:
        with transaction.atomic():
            for account_id in ids:
                account_ensure(account_id=account_id, now=now)
            locked = {a.account_id: a for a in lock_rows(Account.objects.filter(account_id__in=ids))}
            for outcome, item in server:
                _apply_one(account=locked[item.account_id or ""], item=item, outcome=outcome, now=now)
            for account in locked.values():
                account.updated_at = now
                account.save()
    except DatabaseError:
        logger.warning("speaker trust: the ledger write failed; the caller keeps its buffer", exc_info=True)
        for outcome, _ in server:
            outcome.persisted, outcome.activity_applied, outcome.signals_applied = False, 0, 0
            outcome.channel_collision, outcome.events = False, []
        return
    for outcome, _ in server:
        outcome.persisted = True


def speaker_trust_apply(
    *, inputs: list[TrustInput | None], now: datetime | None = None
) -> list[TrustOutcome]:
    """Resolve, then record: one request's whole trust write."""
    outcomes = speaker_trust_resolve(inputs=inputs)
    speaker_trust_record(inputs=inputs, outcomes=outcomes, now=now)
    return outcomes


def _apply_one(*, account: Account, item: TrustInput, outcome: TrustOutcome, now: datetime) -> None:
    source = (item.tier or "", item.base, item.is_owner)
    if source != (account.tier, account.base_trust, account.is_owner):
        account.tier, account.base_trust, account.is_owner = source
        outcome.signals_applied += 1
        outcome.events.append({"type": "source", "tier": item.tier, "base_trust": item.base})
    if item.channel:
        known = list(account.channels or [])
        if known and item.channel not in known:
            # An observed attribute, never a key: reported, and recorded beside the first.
            outcome.channel_collision = True
            outcome.events.append({"type": "channel_collision", "channel": item.channel, "known": known})
        if item.channel not in known:
            account.channels = [*known, item.channel]
    if item.events:
        seen = set(
            ActivityEvent.objects.filter(
                account=account, event_id__in=[event_id for event_id, _ in item.events]
            ).values_list("event_id", flat=True)
        )
        new = [(event_id, count) for event_id, count in item.events if event_id not in seen]
        ActivityEvent.objects.bulk_create(
            [ActivityEvent(account=account, event_id=e, count=c, recorded_at=now) for e, c in new]
        )
        applied = sum(count for _, count in new)
        account.message_count += applied
        outcome.activity_applied += applied
        outcome.events += [
            {"type": "activity", "id": event_id, "count": count, "counted": event_id not in seen}
            for event_id, count in item.events
        ]


# --- legacy profiles and the barrier ---------------------------------------------------------------------


def _barrier(platform: str, now: datetime) -> TrustBarrier:
    barrier, _ = TrustBarrier.objects.get_or_create(platform=platform, defaults={"changed_at": now})
    return barrier


def _legacy_number(raw: Any, default: float) -> float:
    return float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else default


@dataclass
class LegacyImported:
    imported: list[str]
    skipped: list[dict[str, str]]
    barrier: str


def legacy_profiles_import(
    *, platform: str, source: str, profiles: dict[str, Any], final: bool, now: datetime | None = None
) -> LegacyImported:
    """Fold a plugin's legacy trust profiles into the ledger, once per account and source (a re-sent
    chunk changes nothing); a malformed profile is skipped, never the whole chunk. ``final`` clears
    the platform's barrier."""
    now = now or timezone.now()
    imported: list[str] = []
    skipped: list[dict[str, str]] = []
    with transaction.atomic():
        for bare, raw in profiles.items():
            account_id = normalize_account_id(f"{platform}:{str(bare).strip()}")
            if account_id is None or not isinstance(raw, dict):
                skipped.append({"key": str(bare)[:64], "reason": "invalid_account_id"})
                continue
            account, _ = account_ensure(account_id=account_id, now=now)
            account = lock_rows(Account.objects.filter(pk=account.pk)).get()
            if account.legacy_source == source:
                continue
            account.adjustment += _legacy_number(raw.get("adjustment"), 0.0)
            count = raw.get("message_count")
            account.message_count += count if isinstance(count, int) and count > 0 else 0
            events = [e for e in raw.get("processed_activity_events") or [] if isinstance(e, str) and e]
            known = set(ActivityEvent.objects.filter(account=account).values_list("event_id", flat=True))
            ActivityEvent.objects.bulk_create(
                [
                    ActivityEvent(account=account, event_id=e[:96], count=0, recorded_at=now)
                    for e in dict.fromkeys(events)
                    if e[:96] not in known
                ]
            )
            account.legacy_source, account.legacy_imported_at, account.updated_at = source, now, now
            account.save()
            imported.append(account_id)
        barrier = _barrier(platform, now)
        barrier.accounts += len(imported)
        barrier.skipped += len(skipped)
        barrier.chunks += 1
        barrier.source = source
        if final and barrier.status == TrustBarrier.Status.PENDING:
            barrier.status = TrustBarrier.Status.CLEARED
        barrier.changed_at = now
        barrier.save()
    return LegacyImported(imported=imported, skipped=skipped, barrier=barrier.status)


def legacy_barrier_waive(*, platform: str, now: datetime | None = None) -> tuple[str, bool]:
    """Give up waiting for a platform's legacy profiles; returns (status, changed)."""
    now = now or timezone.now()
    with transaction.atomic():
        barrier = _barrier(platform, now)
        if barrier.status != TrustBarrier.Status.PENDING:
            return barrier.status, False
        barrier.status, barrier.changed_at = TrustBarrier.Status.WAIVED, now
        barrier.save()
    return barrier.status, True


def accounts_reconcile(*, account_ids: Iterable[str], now: datetime | None = None) -> dict[str, int]:
    """Recreate the ledger rows of speakers that stored facts carry but the ledger lost (a restored
    database, a lost file); accounts of a platform still behind its barrier are skipped and counted."""
    now = now or timezone.now()
    seen = sorted({a for a in (normalize_account_id(raw) for raw in account_ids) if a})
    known = set(Account.objects.filter(account_id__in=seen).values_list("account_id", flat=True))
    created = skipped = 0
    for account_id in seen:
        if account_id in known:
            continue
        if barrier_pending(account_platform(account_id)):
            skipped += 1
            continue
        account_ensure(account_id=account_id, now=now)
        created += 1
    return {"speakers": len(seen), "accounts_created": created, "skipped_pending": skipped}


# --- account links -------------------------------------------------------------------------------------


def _check_room(*, entity: Entity, adding: list[Account]) -> None:
    counts = dict(
        Account.objects.filter(entity=entity)
        .exclude(pk__in=[a.pk for a in adding])
        .values_list("platform")
        .annotate(n=Count("pk"))
        .values_list("platform", "n")
    )
    for account in adding:
        counts[account.platform] = counts.get(account.platform, 0) + 1
        if counts[account.platform] > LINKED_ACCOUNTS_MAX:
            raise LinkLimit(
                f"an entity links at most {LINKED_ACCOUNTS_MAX} accounts per platform ({account.platform})"
            )


def _entity(entity_id: str) -> Entity:
    entity = Entity.objects.filter(entity_id=entity_id).first()
    if entity is None:
        raise UnknownIdentity(f"unknown entity {entity_id}")
    return entity


def _account(account_id: str) -> Account:
    account = Account.objects.filter(account_id=account_id).first()
    if account is None:
        raise UnknownIdentity(f"unknown account {account_id}")
    return account


def account_bind(*, account_id: str, entity_id: str, now: datetime | None = None) -> tuple[Account, bool]:
    """Move an account into an entity (created with it when new); returns (account, changed).
    Raises LinkLimit (409) beyond 8 accounts of one platform, UnknownIdentity for an unknown entity."""
    now = now or timezone.now()
    with transaction.atomic():
        target = _entity(entity_id)
        account, _ = account_ensure(account_id=account_id, now=now)
        account = lock_rows(Account.objects.filter(pk=account.pk)).get()
        if account.entity_id == target.pk:
            return account, False
        _check_room(entity=target, adding=[account])
        old = account.entity
        account.entity, account.bound_at, account.updated_at = target, now, now
        account.save()
        if not old.accounts.exists():
            old.delete()
    return account, True


def account_unbind(*, account_id: str, now: datetime | None = None) -> tuple[Account, str, bool]:
    """Take an account out of its entity into one of its own; returns (account, former entity id,
    changed). An account alone in its entity is left as it is."""
    now = now or timezone.now()
    with transaction.atomic():
        account = lock_rows(Account.objects.filter(pk=_account(account_id).pk)).get()
        former = account.entity
        if entity_accounts(entity_id=former.entity_id).count() == 1:
            return account, former.entity_id, False
        own, _ = Entity.objects.get_or_create(
            entity_id=derived_entity_id(account_id), defaults={"created_at": now}
        )
        if own.pk == former.pk:  # the entity was named after this account: the account leaves it
            own = Entity.objects.create(
                entity_id=derived_entity_id(f"{account_id}@{now.isoformat()}"), created_at=now
            )
        account.entity, account.bound_at, account.updated_at = own, now, now
        account.save()
    return account, former.entity_id, True


def entities_merge(*, entity_id: str, into_entity_id: str, now: datetime | None = None) -> list[str]:
    """Move every account of ``entity_id`` into ``into_entity_id`` (all or none); returns their ids."""
    now = now or timezone.now()
    with transaction.atomic():
        source, target = _entity(entity_id), _entity(into_entity_id)
        if source.pk == target.pk:
            return []
        moving = list(lock_rows(Account.objects.filter(entity=source)))
        _check_room(entity=target, adding=moving)
        for account in moving:
            account.entity, account.bound_at, account.updated_at = target, now, now
            account.save()
        source.delete()
    return [a.account_id for a in moving]


def entity_forget(*, entity_id: str) -> list[str]:
    """Delete an entity with its accounts and their activity; returns the account ids removed."""
    with transaction.atomic():
        entity = _entity(entity_id)
        accounts = [a.account_id for a in lock_rows(Account.objects.filter(entity=entity))]
        Account.objects.filter(entity=entity).delete()
        entity.delete()
    return accounts
