"""The recent layer's part of the post-turn op: nothing to do yet beyond validating the payload.

Later layers register their own post-turn steps (fact extraction when powerful memory is off,
mention sniffing, feedback checks) on the same op type.
"""

from __future__ import annotations

from typing import Any

from nekomem.journal.registry import register_outbox_step
from recent.services import POST_TURN_OP


def check_post_turn_payload(character_id: int, payload: dict[str, Any]) -> None:
    messages = payload.get("messages")
    if not isinstance(messages, list):
        raise ValueError("post-turn op payload has no message list")


register_outbox_step(POST_TURN_OP, "recent.check_payload", check_post_turn_payload)
