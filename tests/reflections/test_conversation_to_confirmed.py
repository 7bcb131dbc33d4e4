"""The issue's path, in zh and en: a real conversation → facts → a reflection → surfaced → a user
turn that confirms it → R rises → confirmed. Every LLM answer comes from the loopback provider."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from facts.models import Fact
from facts.tasks import facts_extraction_loop
from nekomem.characters.models import Character
from nekomem.journal.models import Event, OutboxOp
from reflections.models import Reflection, SurfacedReflection
from tests.facts.test_extraction import fact_reply, prompt_of
from tests.reflections.test_synthesis import synthesis_reply
from tests.support.dataset import conversation
from tests.support.llm_server import json_content

pytestmark = pytest.mark.django_db

CASES: dict[str, dict[str, Any]] = {
    "zh": {
        "dataset": "memorybank-cn",
        "facts": ["主人喜欢绘画", "主人喜欢弹钢琴", "主人喜欢品茶", "主人喜欢读书", "主人喜欢安静的下午"],
        "reflection": "主人是个喜欢安静、文艺爱好的人",
        "ask": "你是不是特别喜欢安静的爱好呀？",
        "answer": "对呀，被你说中了，我就喜欢这些",
    },
    "en": {
        "dataset": "memorybank-en",
        "facts": [
            "Emily enjoys painting",
            "Emily plays the piano",
            "Emily likes tea tasting",
            "Emily reads a lot",
            "Emily enjoys quiet afternoons",
        ],
        "reflection": "Emily is drawn to quiet, artistic pastimes",
        "ask": "You really love calm, artistic hobbies, right?",
        "answer": "Yes, exactly, you know me well",
    },
}


@pytest.mark.parametrize("language", ["zh", "en"])
def test_a_conversation_becomes_a_confirmed_reflection(
    language, client, post_history, llm_server, django_capture_on_commit_callbacks
):
    case = CASES[language]
    name = "小天" if language == "zh" else "Tian"
    turns = conversation(case["dataset"])[:10]
    for turn in turns:
        post_history(
            "cache", name, ("human" if turn["role"] == "user" else "ai", turn["text"]), language=language
        )
    Character.objects.filter(name=name).update(last_activity_at=timezone.now() - timedelta(seconds=30))

    # Stage 1: the conversation's user lines become facts.
    llm_server.script(fact_reply(*case["facts"], importance=8))
    facts_extraction_loop()
    assert any(t["text"] in prompt_of(llm_server.bodies[0]) for t in turns if t["role"] == "user")
    assert Fact.objects.filter(character__name=name).count() == 5

    # Synthesis through the wire route.
    llm_server.script(synthesis_reply(text=case["reflection"]))
    body = client.post(f"/reflect/{name}", content_type="application/json").json()
    assert body["reflection"]["text"] == case["reflection"] and body["reflection"]["status"] == "pending"
    reflection_id = body["reflection"]["id"]
    assert Fact.objects.filter(character__name=name, absorbed=True).count() == 5
    reflection = Reflection.objects.get(reflection_id=reflection_id)
    assert reflection.reinforcement == pytest.approx(0.4)  # importance 8

    # The cool-down of a new reflection holds it back; once it passed, it is a follow-up topic.
    assert client.get(f"/followup_topics/{name}").json() == {"topics": []}
    Reflection.objects.filter(pk=reflection.pk).update(next_eligible_at=timezone.now() - timedelta(minutes=1))
    topics = client.get(f"/followup_topics/{name}").json()["topics"]
    assert [t["id"] for t in topics] == [reflection_id]
    assert not SurfacedReflection.objects.exists()  # reading does not mark

    response = client.post(
        f"/record_surfaced/{name}",
        data=json.dumps({"reflection_ids": [reflection_id]}),
        content_type="application/json",
    )
    assert response.json() == {"ok": True}
    assert client.get(f"/followup_topics/{name}").json() == {"topics": []}  # 30-minute cool-down again

    # The user's next turn confirms it: the post-turn op classifies the feedback.
    llm_server.script(json_content([{"reflection_id": reflection_id, "feedback": "confirmed"}]))
    with django_capture_on_commit_callbacks(execute=True):
        post_history("cache", name, ("ai", case["ask"]), ("human", case["answer"]), language=language)

    feedback_prompt = prompt_of(llm_server.bodies[-1])
    assert case["answer"] in feedback_prompt and case["reflection"] in feedback_prompt
    reflection.refresh_from_db()
    assert reflection.reinforcement == pytest.approx(1.4)  # +1.0 for the confirmation, raw add
    assert reflection.status == Reflection.Status.CONFIRMED and reflection.confirmed_at is not None
    assert SurfacedReflection.objects.get().feedback == "confirmed"
    assert OutboxOp.objects.filter(status=OutboxOp.Status.DONE).exists()
    events = list(
        Event.objects.filter(character__name=name, type__startswith="reflection.").values_list(
            "type", flat=True
        )
    )
    assert events == [
        "reflection.synthesized",
        "reflection.surfaced",
        "reflection.evidence_updated",
        "reflection.state_changed",
    ]
    funnel = client.get(f"/api/memory/funnel/{name}").json()["counts"]
    assert (funnel["synthesized"], funnel["surfaced"], funnel["confirmed"]) == (1, 1, 1)
