"""``speaker_trust.json``: the ledger as a process-wide file at the root of ``memory/`` (§2.15).

Shape: ``{"version": 1, "entities": {<entity id>: {"created_at", "accounts": {<account id>: record}}},
"account_index": {<account id>: <entity id>}, "legacy_barriers": {<platform>: {...}}}``; an account
record holds its source (``tier``, ``base_trust``, ``is_owner``), ``adjustment``, ``message_count``,
``channels``, ``processed_activity_events`` (``[{id, count}]``), ``legacy_import`` and timestamps.
An import upserts by id, so importing the same file again changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.utils import timezone

from groupchat.identity.models import Account, ActivityEvent, Entity, TrustBarrier
from groupchat.identity.trust import TIERS, account_platform, normalize_account_id, normalize_platform
from nekomem.portability import (
    ImportResult,
    MalformedFile,
    RootFileHandler,
    read_json,
    register_root_file_handler,
    write_json,
)
from nekomem.timestamps import iso_local, parse_iso

FILENAME = "speaker_trust.json"
VERSION = 1


@dataclass(frozen=True)
class _AccountRecord:
    account_id: str
    entity_id: str
    entity_created_at: datetime
    fields: dict[str, Any]
    events: list[tuple[str, int]]


@dataclass(frozen=True)
class _Ledger:
    accounts: list[_AccountRecord]
    barriers: dict[str, dict[str, Any]]


def _when(value: Any, default: datetime) -> datetime:
    return parse_iso(value) or default


def _number(value: Any, key: str, *, unit: bool = False) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or (unit and not 0 <= value <= 1):
        raise ValueError(f"{key} must be a number" + (" 0..1" if unit else ""))
    return float(value)


def _account(account_id: str, raw: Any, entity_id: str, created: datetime) -> _AccountRecord:
    if not isinstance(raw, dict):
        raise ValueError("an account record must be an object")
    tier = raw.get("tier") or ""
    if tier and tier not in TIERS:
        raise ValueError(f"tier must be one of {', '.join(TIERS)}")
    count = raw.get("message_count", 0)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError("message_count must be an integer >= 0")
    channels = raw.get("channels") or []
    if not isinstance(channels, list) or not all(isinstance(c, str) for c in channels):
        raise ValueError("channels must be a list of strings")
    events: list[tuple[str, int]] = []
    for item in raw.get("processed_activity_events") or []:
        if isinstance(item, str):
            events.append((item[:96], 0))
        elif isinstance(item, dict) and isinstance(item.get("id"), str):
            n = item.get("count", 0)
            events.append((item["id"][:96], n if isinstance(n, int) and n >= 0 else 0))
        else:
            raise ValueError("processed_activity_events holds ids or {id, count} objects")
    legacy_raw = raw.get("legacy_import")
    legacy: dict[str, Any] = legacy_raw if isinstance(legacy_raw, dict) else {}
    now = timezone.now()
    fields = {
        "tier": tier,
        "base_trust": _number(raw.get("base_trust"), "base_trust", unit=True),
        "is_owner": bool(raw.get("is_owner")),
        "adjustment": _number(raw.get("adjustment"), "adjustment") or 0.0,
        "message_count": count,
        "channels": channels,
        "legacy_source": str(legacy.get("source") or "")[:128],
        "legacy_imported_at": parse_iso(legacy.get("at")),
        "bound_at": _when(raw.get("bound_at"), created),
        "updated_at": _when(raw.get("updated_at"), now),
    }
    return _AccountRecord(account_id, entity_id, created, fields, list(dict(events).items()))


def read(path: Path) -> _Ledger:
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("entities", {}), dict):
        raise MalformedFile(path, "expected an object with an 'entities' object")
    accounts: list[_AccountRecord] = []
    seen: set[str] = set()
    for entity_id, entity in data.get("entities", {}).items():
        if not isinstance(entity, dict) or not isinstance(entity.get("accounts", {}), dict):
            raise MalformedFile(
                path, "an entity must be an object with an 'accounts' object", entry=entity_id
            )
        if not isinstance(entity_id, str) or not 1 <= len(entity_id) <= 40:
            raise MalformedFile(path, "an entity id must be 1..40 characters", entry=str(entity_id))
        try:
            created = _when(entity.get("created_at"), timezone.now())
        except ValueError as exc:
            raise MalformedFile(path, str(exc), entry=entity_id) from exc
        for raw_id, record in entity.get("accounts", {}).items():
            account_id = normalize_account_id(raw_id)
            if account_id is None or account_id in seen:
                raise MalformedFile(path, "not a stable account id, or listed twice", entry=str(raw_id))
            seen.add(account_id)
            try:
                accounts.append(_account(account_id, record, entity_id, created))
            except ValueError as exc:
                raise MalformedFile(path, str(exc), entry=account_id) from exc
    barriers: dict[str, dict[str, Any]] = {}
    for platform, raw in (data.get("legacy_barriers") or {}).items():
        name = normalize_platform(platform)
        if name is None or not isinstance(raw, dict) or raw.get("status") not in TrustBarrier.Status.values:
            raise MalformedFile(path, "a barrier needs a platform and a status", entry=str(platform))
        try:
            _when(raw.get("changed_at"), timezone.now())
        except ValueError as exc:
            raise MalformedFile(path, str(exc), entry=str(platform)) from exc
        barriers[name] = raw
    return _Ledger(accounts=accounts, barriers=barriers)


def write(ledger: _Ledger) -> ImportResult:
    created = updated = unchanged = 0
    now = timezone.now()
    for record in ledger.accounts:
        entity, _ = Entity.objects.get_or_create(
            entity_id=record.entity_id, defaults={"created_at": record.entity_created_at}
        )
        account = Account.objects.filter(account_id=record.account_id).first()
        fields = {**record.fields, "entity": entity, "platform": account_platform(record.account_id)}
        if account is None:
            account = Account.objects.create(account_id=record.account_id, **fields)
            created += 1
        else:
            changed = [k for k, v in fields.items() if getattr(account, k) != v and k != "updated_at"]
            if changed:
                for key, value in fields.items():
                    setattr(account, key, value)
                account.save()
                updated += 1
            else:
                unchanged += 1
        known = set(ActivityEvent.objects.filter(account=account).values_list("event_id", flat=True))
        ActivityEvent.objects.bulk_create(
            [
                ActivityEvent(account=account, event_id=e, count=c, recorded_at=now)
                for e, c in record.events
                if e not in known
            ]
        )
    Entity.objects.filter(accounts__isnull=True).delete()
    for platform, raw in ledger.barriers.items():
        TrustBarrier.objects.update_or_create(
            platform=platform,
            defaults={
                "status": raw["status"],
                "source": str(raw.get("source") or "")[:128],
                "accounts": int(raw.get("accounts") or 0),
                "skipped": int(raw.get("skipped") or 0),
                "chunks": int(raw.get("chunks") or 0),
                "changed_at": _when(raw.get("changed_at"), now),
            },
        )
    return ImportResult(created=created, updated=updated, unchanged=unchanged, pool="", rows=frozenset())


def _iso(value: datetime | None) -> str | None:
    return iso_local(value)


def export(path: Path) -> int | None:
    accounts = list(Account.objects.select_related("entity").order_by("entity__entity_id", "bound_at", "pk"))
    barriers = list(TrustBarrier.objects.order_by("platform"))
    if not accounts and not barriers:
        if path.exists():
            path.unlink()  # nothing left: an earlier export must not outlive the ledger
        return None
    events: dict[int, list[dict[str, Any]]] = {}
    for account_id, event_id, count in ActivityEvent.objects.order_by("pk").values_list(
        "account_id", "event_id", "count"
    ):
        events.setdefault(account_id, []).append({"id": event_id, "count": count})
    entities: dict[str, Any] = {}
    for a in accounts:
        entity = entities.setdefault(
            a.entity.entity_id, {"created_at": _iso(a.entity.created_at), "accounts": {}}
        )
        entity["accounts"][a.account_id] = {
            "platform": a.platform,
            "bound_at": _iso(a.bound_at),
            "tier": a.tier or None,
            "base_trust": a.base_trust,
            "is_owner": a.is_owner,
            "adjustment": a.adjustment,
            "message_count": a.message_count,
            "channels": list(a.channels or []),
            "processed_activity_events": events.get(a.pk, []),
            "legacy_import": {"source": a.legacy_source, "at": _iso(a.legacy_imported_at)}
            if a.legacy_source
            else None,
            "updated_at": _iso(a.updated_at),
        }
    write_json(
        path,
        {
            "version": VERSION,
            "entities": entities,
            "account_index": {a.account_id: a.entity.entity_id for a in accounts},
            "legacy_barriers": {
                b.platform: {
                    "status": b.status,
                    "source": b.source,
                    "accounts": b.accounts,
                    "skipped": b.skipped,
                    "chunks": b.chunks,
                    "changed_at": _iso(b.changed_at),
                }
                for b in barriers
            },
        },
    )
    return len(accounts)


def register() -> None:
    register_root_file_handler(RootFileHandler(filename=FILENAME, read=read, write=write, export=export))
