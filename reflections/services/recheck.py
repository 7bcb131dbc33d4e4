"""Schema re-check (reference §3.5.6): a slow loop re-judges one v1 entry a tick.

Reflections first, then facts; characters take turns (the one whose last re-check is oldest goes
first, read from the jobs, so the order is a function of the database and survives restarts and a
simulated clock). The summary tier, without thinking, answers ``temporal_scope`` and ``event_when``
for a reflection and ``event_when`` for a fact; the entry becomes schema version 2. Each entry is a
kernel job keyed on it (no provider: the job waits without spending an attempt, and the loop waits
with it); each failure also counts the entry's ``recheck_attempts``, and after 5 it is given up: it
keeps its v1 fields and the loop passes it by, until the kernel's 5-hour probe of dead jobs (or a
retry from the jobs page) makes its job due again for one more attempt, as for every loop of
reference §3.8. Independent of the powerful-memory switch.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import Any

from django.db import transaction
from django.utils import timezone

from facts.services import (
    clean_event_when,
    fact_recheck_failed,
    fact_schema_rejudged,
    language_of,
    recheck_attempts,
    resolve_event_when,
)
from nekomem.characters.language import character_language
from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.characters.services import character_memory_changed
from nekomem.journal.causes import caused_by
from nekomem.journal.jobs import job_fail, job_start, job_succeed, job_wait_for_provider, register_job_kind
from nekomem.journal.models import Job, WorkStatus
from nekomem.journal.work import NO_PROVIDER, no_provider_reason
from nekomem.llm import LLMError, LLMUnavailable, chat_json
from reflections.models import RECALL_POOL, REFLECTION_SCHEMA_VERSION, Reflection
from reflections.ontology import LEGACY_SCOPES, TEMPORAL_SCOPES
from reflections.prompts import recheck_messages
from reflections.selectors import recheck_characters_in_turn, v1_facts, v1_reflections
from reflections.services.lifecycle import reflection_fields_set

logger = logging.getLogger(__name__)

RECHECK_JOB = "reflections.recheck"
RECHECK_TIER = "summary"
RECHECK_MAX_ATTEMPTS = 5
RECHECK_TIMEOUT = 60
# Entries looked at per character a tick before passing on (the ones backing off are skipped).
SCAN_LIMIT = 50
REFLECTION, FACT = "reflection", "fact"


def register_recheck_jobs() -> None:
    register_job_kind(RECHECK_JOB, handler=None, tier=RECHECK_TIER, self_heal=True)


@dataclass(frozen=True)
class RecheckReport:
    kind: str = ""  # reflection | fact, when one was judged or failed
    entry_id: str = ""
    character_id: int | None = None
    outcome: str = ""  # rejudged | failed | gave_up | waiting | nothing
    reason: str = ""


def _open(rows: Any, *, kind: str, character_id: int) -> list[Any]:
    """The entries to try, in order: the given-up ones whose job is due again (the 5-hour probe, or a
    retry by hand), then the first ones not yet given up (fewer than 5 attempts)."""
    prefix = f"{kind}:"
    keys = Job.objects.filter(
        character_id=character_id, kind=RECHECK_JOB, status__in=Job.ACTIVE, key__startswith=prefix
    ).values_list("key", flat=True)
    again = [int(key.removeprefix(prefix)) for key in keys if key.removeprefix(prefix).isdigit()]
    probed = [r for r in rows.filter(pk__in=again) if recheck_attempts(r.extra) >= RECHECK_MAX_ATTEMPTS]
    fresh = (r for r in rows.iterator() if recheck_attempts(r.extra) < RECHECK_MAX_ATTEMPTS)
    return [*probed, *islice(fresh, SCAN_LIMIT)]


def schema_recheck_tick(*, now: datetime | None = None) -> RecheckReport:
    """Re-judge one v1 entry: the next character's first open reflection, else its first open fact."""
    now = now or timezone.now()
    for character_id in recheck_characters_in_turn(job_kind=RECHECK_JOB):
        report = schema_recheck_character(character_id=character_id, now=now)
        if report.outcome != "nothing":
            return report
    return RecheckReport(outcome="nothing", reason="no v1 entries to re-check")


@caused_by("recheck")
def schema_recheck_character(*, character_id: int, now: datetime | None = None) -> RecheckReport:
    """Re-judge the character's next open v1 entry (reflections first); ``nothing`` when none can run
    now (none left, or each one backing off)."""
    now = now or timezone.now()
    for kind, rows in (
        (REFLECTION, v1_reflections(character_id=character_id)),
        (FACT, v1_facts(character_id=character_id)),
    ):
        for row in _open(rows, kind=kind, character_id=character_id):
            job, why = job_start(
                character_id=character_id,
                kind=RECHECK_JOB,
                key=f"{kind}:{row.pk}",
                now=now,
                stop_when_dead=True,
            )
            if job is None:
                if why == WorkStatus.DEAD:
                    continue  # given up on; its 5 attempts are spent
                # Backing off (or no provider): the character's re-check waits for that entry, so a
                # failing provider spends one entry's attempts at a time, not every entry's.
                outcome = "waiting" if why.startswith(NO_PROVIDER) else "nothing"
                return RecheckReport(character_id=character_id, outcome=outcome, reason=why)
            return _recheck(job=job, kind=kind, row=row, now=now)
    return RecheckReport(character_id=character_id, outcome="nothing")


def _reflection_reply(reply: Any) -> dict[str, Any]:
    scope = reply.get("temporal_scope")
    scope = LEGACY_SCOPES.get(scope, scope) if isinstance(scope, str) else None
    if scope not in TEMPORAL_SCOPES:
        raise ValueError("temporal_scope missing or not one of pattern, state, episode, past")
    return {"temporal_scope": scope, "event_when": reply.get("event_when")}


def _fact_reply(reply: Any) -> dict[str, Any]:
    if "event_when" not in reply:
        raise ValueError("event_when missing")
    return {"event_when": reply.get("event_when")}


def _recheck(*, job: Job, kind: str, row: Any, now: datetime) -> RecheckReport:
    character = Character.objects.get(pk=row.character_id)
    entry_id = row.reflection_id if kind == REFLECTION else row.fact_id
    done = RecheckReport(kind=kind, entry_id=entry_id, character_id=character.pk)
    try:
        reply = chat_json(
            tier=RECHECK_TIER,
            messages=recheck_messages(
                kind=kind,
                name=character.name,
                master=character.master_name,
                text=row.text,
                date=timezone.localtime(row.created_at).date().isoformat(),
                language=language_of([row.text], character_language(character)),
            ),
            expect=dict,
            thinking=False,
            timeout=RECHECK_TIMEOUT,
            max_attempts=1,
            validate=_reflection_reply if kind == REFLECTION else _fact_reply,
        )
    except LLMUnavailable:
        job_wait_for_provider(job=job, tier=RECHECK_TIER)
        return RecheckReport(
            **{**done.__dict__, "outcome": "waiting", "reason": no_provider_reason(RECHECK_TIER)}
        )
    except LLMError as exc:
        if kind == REFLECTION:
            attempts = _reflection_failed(reflection=row)
        else:
            attempts = fact_recheck_failed(character_id=character.pk, fact_pk=row.pk)
        status = job_fail(job=job, error=exc, now=now)
        # Given up when the job is dead: its fifth attempt, or the one attempt of a probe.
        outcome = "gave_up" if status == WorkStatus.DEAD else "failed"
        if outcome == "gave_up":
            logger.warning(
                "schema re-check gave up character=%s %s=%s attempts=%s", character.pk, kind, row.pk, attempts
            )
        return RecheckReport(**{**done.__dict__, "outcome": outcome, "reason": type(exc).__name__})
    if kind == REFLECTION:
        _reflection_rejudged(reflection=row, reply=reply, now=now)
    else:
        fact_schema_rejudged(character_id=character.pk, fact_pk=row.pk, event_when=reply["event_when"])
    job_succeed(job=job, outcome="rejudged")
    return RecheckReport(**{**done.__dict__, "outcome": "rejudged"})


def _reflection_failed(*, reflection: Reflection) -> int:
    with transaction.atomic():
        lock_character(reflection.character_id)
        row = Reflection.with_subjects.filter(pk=reflection.pk).first()
        if row is None:
            return 0
        attempts = recheck_attempts(row.extra) + 1
        row.extra = {**(row.extra or {}), "recheck_attempts": attempts}
        row.save(update_fields=["extra", "updated_at"])
        character_memory_changed(character_id=row.character_id, pool=RECALL_POOL, rows=[row.pk])
    return attempts


def _reflection_rejudged(*, reflection: Reflection, reply: dict[str, Any], now: datetime) -> None:
    """The new scope and event time with its ``reflection.state_changed`` (the status stays)."""
    with transaction.atomic():
        lock_character(reflection.character_id)
        row = Reflection.with_subjects.filter(
            pk=reflection.pk, schema_version__lt=REFLECTION_SCHEMA_VERSION
        ).first()
        if row is None:
            return  # re-judged or deleted meanwhile
        raw = clean_event_when(reply.get("event_when"))
        start, end = resolve_event_when(raw, row.created_at)
        reflection_fields_set(
            reflection=row,
            now=now,
            reason="schema_recheck",
            fields={
                "temporal_scope": reply["temporal_scope"],
                "event_when_raw": raw,
                "event_start_at": start,
                "event_end_at": end,
                "schema_version": REFLECTION_SCHEMA_VERSION,
            },
        )
        character_memory_changed(character_id=row.character_id, pool=RECALL_POOL, rows=[row.pk])
