"""Persona entries in the observation pool (reference §3.3.3): Stage 2 and the negative-keyword hook
see every live, non-protected entry as ``persona.<entity>.<id>`` and apply their signals to it."""

from __future__ import annotations

import pytest

from facts.models import Fact
from nekomem.journal.models import Event
from persona.services import persona_ensure
from reflections.services import reflections_keyword_hook, reflections_stage2
from tests.facts.factories import make_fact
from tests.persona.factories import make_entry
from tests.support.llm_server import json_content

pytestmark = pytest.mark.django_db


def test_stage2_reinforces_a_persona_entry_named_in_its_prompt(character, llm_server):
    persona_ensure(character_id=character.pk)
    entry = make_entry(character=character, section="master", text="主人喜欢在周末画水彩画")
    fact = make_fact(character=character, text="阿凛今天又画了一幅水彩画", importance=6)
    prompt_id = f"persona.master.{entry.entry_id}"
    llm_server.script(
        json_content(
            {"signals": [{"source_fact_id": fact.fact_id, "target_id": prompt_id, "signal": "reinforces"}]}
        )
    )
    result = reflections_stage2(character_id=character.pk)
    assert result.applied == 1 and result.marked
    entry.refresh_from_db()
    assert entry.reinforcement == pytest.approx(0.5) and entry.rein_last_signal_at is not None
    prompt = llm_server.bodies[0]["messages"][0]["content"]
    assert f"[{prompt_id}]" in prompt
    # The card's protected entries are the character card's: never in the pool.
    protected = character.persona_entries.filter(protected=True)
    assert protected.exists() and not any(f".{p.entry_id}]" in prompt for p in protected)
    event = Event.objects.filter(character=character, type="persona.evidence_updated").get()
    assert event.payload["entry_id"] == entry.entry_id and event.payload["source"] == "user_fact"
    assert not Fact.objects.filter(signal_processed=False).exists()


def test_the_keyword_hook_disputes_a_persona_entry(character, llm_server):
    entry = make_entry(character=character, section="master", text="主人很喜欢吃香菜")
    llm_server.script(json_content({"targets": [{"target_id": entry.entry_id}]}))  # a bare id matches
    payload = {"messages": [{"type": "human", "data": {"content": "我不喜欢香菜，你搞错了"}}]}
    assert reflections_keyword_hook(character_id=character.pk, payload=payload) == 1
    entry.refresh_from_db()
    assert entry.disputation == pytest.approx(1.0)
