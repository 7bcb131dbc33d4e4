"""Every post-turn step counts once (issue 35): the keyword hook's disputation and the mention count
are applied once although a step after them waits for a provider and then fails."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction

from nekomem.journal import services
from nekomem.journal.jobs import JobWait
from nekomem.journal.models import OutboxOp
from nekomem.journal.registry import POST_TURN_OP, register_outbox_step, unregister_outbox_step
from nekomem.journal.work import no_provider_reason
from nekomem.llm.client import chat_json
from nekomem.llm.errors import LLMUnavailable
from tests.persona.factories import make_entry
from tests.support.llm_server import error, json_content

pytestmark = pytest.mark.django_db

TURN = {
    "messages": [
        {"type": "human", "data": {"content": "我不喜欢香菜，你搞错了"}},
        {"type": "ai", "data": {"content": "好的，以后香菜都不放了"}},
    ]
}


def summary_note(character_id: int, payload: dict[str, Any]) -> None:
    """A step after the counts that needs the summary tier, as a layer's LLM step does."""
    try:
        chat_json(tier="summary", messages=[{"role": "user", "content": "note"}], expect=dict)
    except LLMUnavailable as exc:
        raise JobWait(no_provider_reason("summary")) from exc


@pytest.fixture
def later_step():
    register_outbox_step(POST_TURN_OP, "tests.summary_note", summary_note)
    yield
    unregister_outbox_step(POST_TURN_OP, "tests.summary_note")


def test_counts_apply_once_while_a_later_step_waits_then_fails(character, llm_server, settings, later_step):
    entry = make_entry(character=character, section="master", text="主人很喜欢吃香菜")
    summary_tier = settings.LLM_TIERS["summary"]
    settings.LLM_TIERS = {**settings.LLM_TIERS, "summary": {"base_url": "", "api_key": "", "model": ""}}
    with transaction.atomic():
        op = services.outbox_op_register(character_id=character.pk, op_type=POST_TURN_OP, payload=TURN)

    # First run: the keyword hook disputes the entry, the reply mentions it; the summary tier is unset.
    llm_server.script(json_content({"targets": [{"target_id": entry.entry_id}]}))
    assert services.outbox_op_execute(op_id=op.op_id) == "waiting"
    op.refresh_from_db()
    assert op.waiting_reason == no_provider_reason("summary") and op.attempts == 0
    assert {"reflections.keyword_hook", "persona.mentions"} <= set(op.steps_done)

    # Second run: a provider appeared but answers 500 (three tries): one attempt, nothing counted again.
    settings.LLM_TIERS = {**settings.LLM_TIERS, "summary": summary_tier}
    llm_server.script(*[error(500)] * 3)
    assert services.outbox_op_execute(op_id=op.op_id) == "waiting"
    op.refresh_from_db()
    assert op.attempts == 1 and op.waiting_reason == "backoff"

    # Third run: the step succeeds and the op is done.
    llm_server.script(json_content({"ok": True}))
    assert services.outbox_op_execute(op_id=op.op_id) == "done"

    entry.refresh_from_db()
    assert entry.disputation == pytest.approx(1.0)
    assert len(entry.recent_mentions) == 1
    models = [body["model"] for body in llm_server.bodies]
    assert models.count("test-emotion-model") == 1 and models.count("test-summary-model") == 4
    assert OutboxOp.objects.get(pk=op.pk).status == OutboxOp.Status.DONE
