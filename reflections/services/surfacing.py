"""Proactive surfacing and the user's feedback on it (reference §1.4, §2.9, §3.2 step 4, §3.5.2).

``/followup_topics`` only reads (a weighted draw among eligible pending reflections);
``/record_surfaced`` is what the chat server calls once it actually brought them up. The post-turn op
then asks the LLM how the user took each open one and applies the evidence.
"""

from __future__ import annotations

import logging
import random
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from nekomem.characters.language import character_language
from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.journal.jobs import JobWait
from nekomem.journal.services import event_append
from nekomem.journal.work import no_provider_reason
from nekomem.language.messages import message_text
from nekomem.language.resolution import language_of
from nekomem.llm import LLMError, LLMUnavailable, chat_json
from reflections.evidence import Signal
from reflections.models import Reflection, SurfacedReflection
from reflections.prompts import feedback_messages
from reflections.sampling import weighted_sample
from reflections.selectors import reflections_scored, surfaced_awaiting_feedback
from reflections.services.lifecycle import (
    reflection_signal_apply,
    reflection_transition,
    reflections_auto_promote,
)
from reflections.services.records import ACTIVE_STATUSES
from reflections.services.synthesis import SURFACE_COOLDOWN

logger = logging.getLogger(__name__)

REFLECTION_SURFACE_TOP_K = 3
SURFACE_WEIGHT_OFFSET = 0.5
FEEDBACK_TIMEOUT = 60
_FEEDBACK_SIGNALS = {
    Reflection.Feedback.CONFIRMED: (Signal.CONFIRMED, "user_confirm"),
    Reflection.Feedback.DENIED: (Signal.DENIED, "user_rebut"),
    Reflection.Feedback.IGNORED: (Signal.IGNORED, "user_ignore"),
}


def _eligible_scores(*, character_id: int, now: datetime) -> list[tuple[int, float]]:
    """(pk, score) of pending reflections past their cool-down with a score of at least zero."""
    rows = reflections_scored(
        character_id=character_id,
        now=now,
        statuses=(Reflection.Status.PENDING,),
        where=Q(next_eligible_at__lte=now) | Q(next_eligible_at__isnull=True),
    )
    return [(row.pk, row.score) for row in rows if row.score >= 0]


def followup_topics(
    *, character_id: int, now: datetime | None = None, rng: random.Random | None = None
) -> list[Reflection]:
    """At most three eligible reflections, drawn by weight ``score + 0.5`` without replacement."""
    now = now or timezone.now()
    candidates = _eligible_scores(character_id=character_id, now=now)
    if len(candidates) > REFLECTION_SURFACE_TOP_K:
        candidates = weighted_sample(
            candidates,
            [score + SURFACE_WEIGHT_OFFSET for _, score in candidates],
            REFLECTION_SURFACE_TOP_K,
            rng=rng or random.Random(),
        )
    chosen = [pk for pk, _ in candidates]
    rows = Reflection.objects.in_bulk(chosen)
    return [rows[pk] for pk in chosen]


def reflections_record_surfaced(
    *, character_id: int, reflection_ids: list[str], now: datetime | None = None
) -> int:
    """Cool-down of 30 minutes, feedback reset, one ``surfaced`` row each; unknown ids are ignored."""
    now = now or timezone.now()
    with transaction.atomic():
        lock_character(character_id)
        reflections = list(
            Reflection.objects.filter(
                character_id=character_id, reflection_id__in=list(dict.fromkeys(reflection_ids))
            ).order_by("pk")
        )
        if not reflections:
            return 0
        until = now + SURFACE_COOLDOWN
        Reflection.objects.filter(pk__in=[r.pk for r in reflections]).update(
            next_eligible_at=until, feedback=None, updated_at=now
        )
        SurfacedReflection.objects.bulk_create(
            SurfacedReflection(
                character_id=character_id, reflection_id=r.reflection_id, text=r.text, surfaced_at=now
            )
            for r in reflections
        )
        event_append(
            character_id=character_id,
            event_type="reflection.surfaced",
            payload={
                "reflection_ids": [r.reflection_id for r in reflections],
                "entries": [{"reflection_id": r.reflection_id, "text": r.text} for r in reflections],
                "surfaced_at": now.isoformat(),
                "next_eligible_at": until.isoformat(),
            },
        )
    return len(reflections)


def _user_lines(payload: dict[str, Any]) -> list[tuple[str, str]]:
    lines = []
    for m in payload.get("messages") or []:
        if not isinstance(m, dict) or m.get("type") not in ("human", "ai"):
            continue
        text = message_text((m.get("data") or {}).get("content"))
        if text.strip():
            lines.append(("user" if m["type"] == "human" else "assistant", text))
    return lines


def _classified(reply: Any, open_ids: set[str]) -> dict[str, str]:
    verdicts: dict[str, str] = {}
    for item in reply if isinstance(reply, list) else []:
        if not isinstance(item, dict):
            continue
        rid, feedback = item.get("reflection_id"), item.get("feedback")
        if isinstance(rid, str) and rid in open_ids and feedback in Reflection.Feedback.values:
            verdicts.setdefault(rid, feedback)
    return verdicts


def reflections_feedback_check(
    *, character_id: int, payload: dict[str, Any], now: datetime | None = None
) -> int:
    """The post-turn op's feedback step; returns how many surfaced reflections got feedback.

    Runs only when surfaced entries await feedback and the turn has user messages. No provider makes
    the op wait (``JobWait``); any other LLM failure leaves the entries open for the next turn.
    """
    awaiting = surfaced_awaiting_feedback(character_id=character_id)
    lines = _user_lines(payload)
    if not awaiting or not any(role == "user" for role, _ in lines):
        return 0
    character = Character.objects.get(pk=character_id)
    items = list(dict.fromkeys((s.reflection_id, s.text) for s in awaiting))
    messages = feedback_messages(
        name=character.name,
        master=character.master_name,
        items=items,
        lines=lines,
        language=language_of(
            [t for r, t in lines if r == "user"],
            character_language(character, request_language=payload.get("language")),
        ),
    )
    try:
        reply = chat_json(tier="summary", messages=messages, expect=list, timeout=FEEDBACK_TIMEOUT)
    except LLMUnavailable as exc:
        raise JobWait(no_provider_reason("summary")) from exc
    except LLMError as exc:
        # The entries stay open and the next user turn asks again; failing the op instead would
        # re-run its other steps (Stage 1 in OFF mode) for a question that can wait.
        logger.info("feedback check failed character=%s (%s)", character_id, type(exc).__name__)
        return 0
    verdicts = _classified(reply, {rid for rid, _ in items})
    applied = _feedback_apply(character_id=character_id, verdicts=verdicts, now=now or timezone.now())
    reflections_auto_promote(character_id=character_id, now=now)
    return applied


def _feedback_apply(*, character_id: int, verdicts: dict[str, str], now: datetime) -> int:
    if not verdicts:
        return 0
    applied = 0
    with transaction.atomic():
        lock_character(character_id)
        still_open = SurfacedReflection.objects.filter(
            character_id=character_id, reflection_id__in=list(verdicts), feedback__isnull=True, handled=False
        )
        open_ids = set(still_open.values_list("reflection_id", flat=True))
        for reflection in Reflection.objects.filter(
            character_id=character_id, reflection_id__in=list(open_ids)
        ):
            feedback = verdicts[reflection.reflection_id]
            SurfacedReflection.objects.filter(
                character_id=character_id, reflection_id=reflection.reflection_id, feedback__isnull=True
            ).update(feedback=feedback)
            if reflection.status not in ACTIVE_STATUSES:
                continue
            signal, source = _FEEDBACK_SIGNALS[Reflection.Feedback(feedback)]
            reflection.feedback = feedback
            reflection_signal_apply(reflection=reflection, signal=signal, source=source, now=now)
            if feedback == Reflection.Feedback.DENIED:
                reflection_transition(
                    reflection=reflection,
                    to=Reflection.Status.DENIED,
                    now=now,
                    reason="user_denied",
                    also={"denied_reason": "user_denied"},
                )
            applied += 1
    return applied
