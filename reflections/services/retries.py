"""The layer's keyed background work on the kernel's job mechanism (reference §3.8).

Synthesis, Stage 2 and the rebuttal check run from their loops, each keyed on its input (synthesis on
a hash of all unabsorbed fact ids, Stage 2 on the fact ids it reads, rebuttal on the start of its
window), so new input starts the count again and the old key's jobs are finished as superseded. The
kernel does the rest: 5 attempts with back-off of 1, 2, 4, 8 minutes, then dead; a dead key does not
run again until the 5-hourly self-heal probe (or a retry by hand) revives it; no provider parks the
job without spending an attempt.
"""

from __future__ import annotations

from datetime import datetime

from nekomem.journal.jobs import job_start, job_supersede, register_job_kind
from nekomem.journal.models import Job

SYNTHESIS_JOB = "reflections.synthesis"
# A group-chat subject's synthesis: keyed ``<subject hash>.<hash of its unabsorbed ids>``, so each subject
# backs off on its own and new facts about one subject supersede only that subject's key.
SUBJECT_SYNTHESIS_JOB = "reflections.subject_synthesis"
STAGE2_JOB = "reflections.stage2"
# Keyed on the start of the window of user messages it checks; a dead window is given up (the
# cursor moves past it), so it needs no probe.
REBUTTAL_JOB = "reflections.rebuttal"


def register_jobs() -> None:
    for kind in (SYNTHESIS_JOB, SUBJECT_SYNTHESIS_JOB, STAGE2_JOB):
        register_job_kind(kind, handler=None, tier="summary", self_heal=True)
    register_job_kind(REBUTTAL_JOB, handler=None, tier="summary")


def keyed_job_start(
    *, character_id: int, kind: str, key: str, now: datetime, within: str = ""
) -> tuple[Job | None, str]:
    """The job for this input, claimed for one run; or None and why not (``backoff``, ``dead``,
    ``busy``, ``no_provider:summary``). ``within``: supersede only the keys sharing this prefix."""
    job_supersede(character_id=character_id, kind=kind, key=key, within=within)
    return job_start(character_id=character_id, kind=kind, key=key, now=now, stop_when_dead=True)
