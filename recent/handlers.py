"""The recent layer's registrations with the kernel: its post-turn step, job kinds and schedules.

Its part of the post-turn op does nothing yet beyond validating the payload; later layers register
their own post-turn steps (fact extraction when powerful memory is off, mention sniffing, feedback
checks) on the same op type.
"""

from __future__ import annotations

from typing import Any

from nekomem.journal.registry import POST_TURN_OP, register_history_layer, register_outbox_step
from nekomem.runtime.schedules import ScheduleSpec, register_schedule
from recent import jobs
from recent.services.history import MEMO_HISTORY


def check_post_turn_payload(character_id: int, payload: dict[str, Any]) -> None:
    messages = payload.get("messages")
    if not isinstance(messages, list):
        raise ValueError("post-turn op payload has no message list")


def register() -> None:
    register_outbox_step(POST_TURN_OP, "recent.check_payload", check_post_turn_payload)
    register_history_layer(MEMO_HISTORY)
    jobs.register()
    register_schedule(
        ScheduleSpec(
            name="recent-idle-maintenance",
            func="recent.tasks.idle_maintenance",
            minutes=1,
            description="compress and review the recent window of characters idle for 10 s or more",
        )
    )
