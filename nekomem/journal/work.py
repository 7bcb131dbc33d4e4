"""The mechanism of durable work on any ``DurableWork`` table (jobs and outbox ops alike): claim with a
lease and a run token, succeed, wait with a reason, fail with back-off, dead-letter, expire leases.

Every finishing write is conditional on the run token, so a cancelled or re-claimed row is never
overwritten by a stale run (``nekomem.journal.jobs`` has the whole story).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db.models import Field, JSONField, Q, QuerySet
from django.utils import timezone

from nekomem.journal.models import DurableWork, WorkStatus
from nekomem.llm import provider_status
from nekomem.runtime.state import STORAGE_BLOCKED
from nekomem.statements import column, database, model_field

JOB_MAX_ATTEMPTS = 5
# The first retry waits a minute (the sweep's own period); each further one twice as long.
BACKOFF_FIRST = timedelta(minutes=1)
DEFAULT_LEASE = timedelta(minutes=10)
# Reference §3.8 liveness rule: dead work of a kind that opts in gets one probe every 5 h.
SELF_HEAL_EVERY = timedelta(hours=5)
# Work younger than this is most likely still queued from its on_commit hook.
SWEEP_GRACE = timedelta(minutes=1)
WAIT_BACKOFF = "backoff"
NO_PROVIDER = "no_provider:"
LEASE_EXPIRED = "LeaseExpired: the worker holding it stopped before it finished"
W = TypeVar("W", bound=DurableWork)


def no_provider_reason(tier: str) -> str:
    return f"{NO_PROVIDER}{tier}"


def backoff_delay(attempts: int) -> timedelta:
    """How long work waits after its ``attempts``-th failure: 1, 2, 4, 8 minutes."""
    return BACKOFF_FIRST * (2 ** max(0, attempts - 1))


def error_text(error: BaseException) -> str:
    # Exceptions of ours carry metadata only (never keys or memory text): see nekomem.llm.errors.
    return f"{type(error).__name__}: {error}"[:2000]


def claimable(now: datetime) -> Q:
    """Work a runner may take: not finished, and not held by a live lease."""
    return Q(status__in=[WorkStatus.PENDING, WorkStatus.WAITING]) | Q(
        status=WorkStatus.RUNNING, lease_until__lt=now
    )


def work_claim(queryset: QuerySet[W], *, lease: timedelta, now: datetime | None = None) -> uuid.UUID | None:
    """Lease the claimable rows of ``queryset`` under one fresh run token; None when none was free.

    An explicit run does not wait for the back-off: the sweep decides when work is due.
    """
    now = now or timezone.now()
    token = uuid.uuid4()
    claimed = queryset.filter(claimable(now)).update(
        status=WorkStatus.RUNNING, lease_until=now + lease, run_token=token, updated_at=now
    )
    return token if claimed else None


def work_claim_returning(
    model: type[W], *, pks: Sequence[Any], lease: timedelta, fields: Sequence[str]
) -> tuple[uuid.UUID | None, list[tuple[Any, ...]]]:
    """``work_claim`` of the rows ``pks`` in one ``UPDATE … RETURNING`` that also reads ``fields``.

    The outbox claims a batch of ops for every few chat turns; as ``UPDATE`` then ``SELECT`` through
    the ORM the cluster ran half as many ops a second on SQLite (``bench/outbox_claim.py``). Built
    from the model's fields, as ``nekomem.statements`` builds the turn write.
    """
    db = database()
    now = timezone.now()
    token = uuid.uuid4()

    def quoted(name: str) -> str:
        return db.ops.quote_name(column(model, name))

    def prep(name: str, value: Any) -> Any:
        return model_field(model, name).get_db_prep_save(value, db)

    sql = (
        f"UPDATE {db.ops.quote_name(model._meta.db_table)} SET {quoted('status')} = %s, "
        f"{quoted('lease_until')} = %s, {quoted('run_token')} = %s, {quoted('updated_at')} = %s "
        f"WHERE {quoted(model._meta.pk.name)} IN ({', '.join(['%s'] * len(pks))}) "
        f"AND ({quoted('status')} IN (%s, %s) OR ({quoted('status')} = %s AND {quoted('lease_until')} < %s)) "
        f"RETURNING {', '.join(quoted(name) for name in fields)}"
    )
    params = [
        WorkStatus.RUNNING,
        prep("lease_until", now + lease),
        prep("run_token", token),
        prep("updated_at", now),
        *(prep(model._meta.pk.name, pk) for pk in pks),
        WorkStatus.PENDING,
        WorkStatus.WAITING,
        WorkStatus.RUNNING,
        prep("lease_until", now),
    ]
    with db.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    converters = [model_field(model, name) for name in fields]
    values = [tuple(_from_db(f, v) for f, v in zip(converters, row, strict=True)) for row in rows]
    return (token if values else None), values


def _from_db(field: Field, value: Any) -> Any:
    if isinstance(field, JSONField):  # a raw cursor may hand JSON back as text
        return json.loads(value) if isinstance(value, str | bytes) else value
    return field.to_python(value)


def work_current(model: type[W], *, pk: Any, token: uuid.UUID | None) -> QuerySet[W]:
    """The row while this run still holds it: finishing writes go through this."""
    return model._default_manager.filter(pk=pk, run_token=token, status=WorkStatus.RUNNING)


def work_succeed(queryset: QuerySet[W], **also: Any) -> int:
    now = timezone.now()
    return queryset.update(
        status=WorkStatus.DONE,
        waiting_reason="",
        next_attempt_at=None,
        last_error="",
        lease_until=None,
        finished_at=now,
        updated_at=now,
        **also,
    )


def work_wait(queryset: QuerySet[W], *, reason: str, retry_after: timedelta | None = None) -> int:
    """Park without spending an attempt. No ``retry_after``: due once the reason clears (a provider)."""
    now = timezone.now()
    return queryset.update(
        status=WorkStatus.WAITING,
        waiting_reason=reason[:60],
        next_attempt_at=None if retry_after is None else now + retry_after,
        lease_until=None,
        updated_at=now,
    )


def work_fail(
    model: type[W],
    *,
    pk: Any,
    token: uuid.UUID | None,
    error: BaseException,
    now: datetime | None = None,
    delay: Callable[[int], timedelta] = backoff_delay,
) -> str | None:
    """Count one failed attempt: back off (from ``now``, by ``delay``), or dead-letter the fifth.
    Returns the new status, or None when the run no longer held the row (cancelled or re-claimed)."""
    statuses = _fail_rows(
        work_current(model, pk=pk, token=token), error=error_text(error), now=now, delay=delay
    )
    return statuses.get(pk)


def _fail_rows(
    queryset: QuerySet[W],
    *,
    error: str,
    now: datetime | None = None,
    delay: Callable[[int], timedelta] = backoff_delay,
) -> dict[Any, str]:
    """Count one failed attempt on each row of ``queryset``; each write is conditional on the row
    still matching it with the attempts read, so a concurrent finish or retry is never overwritten."""
    now = now or timezone.now()
    statuses: dict[Any, str] = {}
    for pk, attempts in list(queryset.values_list("pk", "attempts")):
        spent = attempts + 1 >= JOB_MAX_ATTEMPTS
        fields: dict[str, Any] = {
            "attempts": attempts + 1,
            "last_error": error,
            "lease_until": None,
            "updated_at": now,
            "status": WorkStatus.DEAD if spent else WorkStatus.WAITING,
            "waiting_reason": "" if spent else WAIT_BACKOFF,
            "next_attempt_at": None if spent else now + delay(attempts + 1),
        }
        if spent:
            fields["finished_at"] = now
        if queryset.filter(pk=pk, attempts=attempts).update(**fields):
            statuses[pk] = fields["status"]
    return statuses


def work_due(model: type[W], *, now: datetime, grace: timedelta, ready_tiers: set[str]) -> QuerySet[W]:
    """Work the sweep should enqueue: pending work whose task was lost, a retry whose back-off ended,
    work that waited for a provider which is now configured, and work the storage block stopped
    (the sweep runs only while storage is open). (Expired leases are failed first.)"""
    due = (
        Q(status=WorkStatus.PENDING, updated_at__lte=now - grace)
        | Q(status=WorkStatus.WAITING, next_attempt_at__lte=now)
        | Q(status=WorkStatus.WAITING, waiting_reason=STORAGE_BLOCKED)
        | Q(
            status=WorkStatus.WAITING, waiting_reason__in=[no_provider_reason(t) for t in sorted(ready_tiers)]
        )
    )
    return model._default_manager.filter(due)


def work_expire_leases(model: type[W], *, now: datetime) -> tuple[list[Any], list[Any]]:
    """Count an attempt for each run whose worker vanished (its lease expired) and make the row due
    at once, or dead when that was its fifth; returns the rows due again and the rows now dead."""
    expired = model._default_manager.filter(status=WorkStatus.RUNNING, lease_until__lt=now)
    statuses = _fail_rows(expired, error=LEASE_EXPIRED, now=now)
    again = [pk for pk, status in statuses.items() if status == WorkStatus.WAITING]
    # The lease itself was the wait: run it again now rather than after a back-off.
    model._default_manager.filter(pk__in=again, status=WorkStatus.WAITING).update(next_attempt_at=now)
    return again, [pk for pk, status in statuses.items() if status == WorkStatus.DEAD]


def work_release_leases(model: type[W]) -> int:
    """At startup no worker of ours is running yet, so every lease is stale: hand the work back."""
    return model._default_manager.filter(status=WorkStatus.RUNNING).update(
        status=WorkStatus.PENDING, lease_until=None, run_token=None
    )


def ready_tiers() -> set[str]:
    """The LLM tiers with a provider configured now."""
    return {tier for tier in settings.LLM_TIER_NAMES if provider_status(tier) is None}
