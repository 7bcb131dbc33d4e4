"""The benches' healthy provider tells each prompt kind of §7 apart and answers it in the shape the
layer accepts: every prompt is built by the layer's own builder and sent through the real client to
the loopback server, and the reply goes through the layer's own check where it has one."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.provider_script import HealthyProvider, prompt_kind, prompt_text
from facts.prompts import arbitration_messages, disclosure_messages, extraction_messages
from facts.services.records import draft_from_llm
from nekomem.llm import chat_json
from persona.prompts import corrections_messages, merge_messages
from persona.prompts import refine_messages as persona_refine_messages
from recent.compression import summary_from_reply
from recent.prompts import further_summarise_messages, review_messages, summarise_messages
from recent.review import corrected_from_reply
from reflections.prompts import (
    feedback_messages,
    keyword_messages,
    rebuttal_messages,
    recheck_messages,
    signal_messages,
    synthesis_messages,
)
from reflections.prompts import refine_messages as reflection_refine_messages
from reflections.refine import refine_actions
from reflections.reranking import llm_rank_chat

LANGUAGES = ("zh", "en", "ja", "ko", "ru", "es", "pt", "zh-TW")
DIALOGUE = [{"role": "human", "content": "我下周要去杭州出差"}, {"role": "ai", "content": "路上小心喵"}]
LINES = [("user", "我下周要去杭州出差"), ("ai", "路上小心喵")]


def prompts(language: str) -> dict[str, list[dict[str, Any]]]:
    who: dict[str, Any] = {"name": "Mel", "master": "Emily"}
    return {
        "summary": summarise_messages(language=language, dialogue="Emily | hi\nMel | hello", **who),
        "further_summary": further_summarise_messages(language=language, summary="a long memo", **who),
        "review": review_messages(language=language, dialogue=json.dumps(DIALOGUE), **who),
        "extraction": extraction_messages(lines=LINES, language=language, **who),
        "disclosure": disclosure_messages(lines=LINES, known=["Mel likes fish"], language=language, **who),
        "arbitration": arbitration_messages(
            name="Mel",
            pairs=[(0, "Emily goes to Hangzhou", "Emily travels"), (1, "a", "b")],
            language=language,
        ),
        "synthesis": synthesis_messages(
            facts=[("Emily goes to Hangzhou next week", 6)], related=[], language=language, **who
        ),
        "feedback": feedback_messages(
            items=[("r-1", "Emily travels a lot")], lines=LINES, language=language, **who
        ),
        "signals": signal_messages(
            observations=['[r-1] "Emily travels a lot" (evidence_score=1.00)'],
            facts=["[f-1] Emily goes to Hangzhou next week"],
            language=language,
            **who,
        ),
        "negative_targets": keyword_messages(
            messages=["that's not true"], observations=['[r-1] "Emily travels"'], language=language, **who
        ),
        "rebuttal": rebuttal_messages(
            observations=["[r-1] Emily travels a lot"], messages=["I never travel"], language=language, **who
        ),
        "promotion_merge": merge_messages(
            entity="master", text="Emily travels a lot", pool=[], language=language, **who
        ),
        "corrections": corrections_messages(
            name="Mel",
            lines=[
                "[0] existing(trust=0.9): Emily hates trains | "
                "new observation(trust=0.5): Emily takes trains",
                "[1] 已有(trust=0.9): 主人怕猫 | 新观察(trust=0.5): 主人养猫",
            ],
            language=language,
        ),
        "refine": persona_refine_messages(
            name="Mel",
            section="master",
            members=[("Emily likes tea", 1.0), ("Emily likes tea", -0.5), ("Emily hates trains", 0.0)],
            language=language,
        ),
        "recheck_reflection": recheck_messages(
            kind="reflection", text="Emily travels a lot", date="2026-12-01", language=language, **who
        ),
        "recheck_fact": recheck_messages(
            kind="fact", text="Emily goes to Hangzhou", date="2026-12-01", language=language, **who
        ),
    }


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_prompt_kind_is_recognised(language):
    for kind, messages in prompts(language).items():
        assert prompt_kind(prompt_text({"messages": messages})) == kind


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_answer_passes_the_layers_checks(llm_server, language):
    provider = HealthyProvider()
    llm_server.fallback = provider.answer
    built = prompts(language)

    def ask(kind: str, expect: type, validate: Any = None) -> Any:
        return chat_json(tier="summary", messages=built[kind], expect=expect, validate=validate)

    assert ask("summary", dict, summary_from_reply)
    assert ask("further_summary", dict, summary_from_reply)
    assert ask("review", dict, corrected_from_reply) == [
        ("human", DIALOGUE[0]["content"]),
        ("ai", "路上小心喵"),
    ]
    for kind, entity in (("extraction", "master"), ("disclosure", "neko")):
        (fact,) = [draft_from_llm(item, source="bench") for item in ask(kind, list)]
        assert fact is not None and fact.entity == entity and "杭州" in fact.text
    assert [d["index"] for d in ask("arbitration", list)] == [0, 1]
    # Built from the fact it was sent, whatever the prompt's language calls importance.
    assert "Hangzhou" in ask("synthesis", dict)["reflection"]
    assert ask("feedback", list) == [{"reflection_id": "r-1", "feedback": "ignored"}]
    (signal,) = ask("signals", dict)["signals"]
    assert (signal["source_fact_id"], signal["target_id"], signal["signal"]) == ("f-1", "r-1", "reinforces")
    assert ask("negative_targets", dict) == {"targets": []}
    assert ask("rebuttal", dict) == {"verdicts": [{"reflection_id": "r-1", "verdict": "kept"}]}
    assert ask("promotion_merge", dict)["action"] == "promote_fresh"
    assert [(c["index"], c["text"]) for c in ask("corrections", list)] == [
        (0, "Emily takes trains"),
        (1, "主人养猫"),
    ]
    # Refine merges the members that say the very same thing and keeps the rest, in either layer.
    for refine in (
        built["refine"],
        reflection_refine_messages(
            name="Mel",
            master="Emily",
            members=[("Emily hates trains", 0.0), ("Emily likes tea", 1.0), ("Emily likes tea", 0.2)],
            language=language,
        ),
    ):
        reply = chat_json(tier="summary", messages=refine, expect=list)
        assert [(a.action, a.members) for a in refine_actions(reply, 3) or []] == [
            ("merge", (0, 1) if refine is built["refine"] else (1, 2))
        ]
    assert ask("recheck_reflection", dict) == {"temporal_scope": "state", "event_when": None}
    assert ask("recheck_fact", dict) == {"event_when": None}
    candidates = [{"index": i, "text": f"memory {i}", "evidence": 0.0} for i in range(3)]
    assert llm_rank_chat(["trains"], candidates, 2) == [0, 1, 2]
    assert "unknown" not in provider.counts() and "unanswerable" not in provider.counts()


def test_an_unknown_prompt_is_answered_500_and_counted(llm_server):
    provider = HealthyProvider()
    llm_server.fallback = provider.answer
    reply = provider.answer({"messages": [{"role": "user", "content": "write a poem"}]})
    assert reply.status == 500
    assert provider.counts() == "unknown (unanswerable) 1"
