"""The issue's end-to-end path: turns posted through /cache become deduplicated facts when the
scheduled extractor runs with a provider configured."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from facts.models import ExtractionCursor, Fact, FactDedupPair
from facts.tasks import facts_extraction_loop
from nekomem.characters.models import Character
from nekomem.runtime.services import schedules_upsert
from tests.facts.test_extraction import fact_reply, prompt_of
from tests.support.dataset import conversation

pytestmark = pytest.mark.django_db


def test_cached_conversation_becomes_deduplicated_facts_via_the_schedule(post_history, llm_server):
    assert "nekomem:facts-extraction" in schedules_upsert()
    turns = conversation("memorybank-cn")[:12]
    for turn in turns:
        post_history("cache", "小天", ("human" if turn["role"] == "user" else "ai", turn["text"]))
    # The cold-start rule waits for ten quiet seconds after the last turn.
    Character.objects.filter(name="小天").update(last_activity_at=timezone.now() - timedelta(seconds=30))

    llm_server.script(
        fact_reply(
            "主人喜欢绘画、弹钢琴和品茶",
            "主人喜欢绘画、弹钢琴和品茶",
            "主人喜欢绘画、弹钢琴和品茶。",
            "主人叫张曼婷",
        )
    )
    facts_extraction_loop()

    prompt = prompt_of(llm_server.bodies[0])
    user_lines = [t["text"] for t in turns if t["role"] == "user"]
    assert all(line in prompt for line in user_lines)
    assert not any(t["text"] in prompt for t in turns if t["role"] == "assistant")
    stored = sorted(Fact.objects.filter(character__name="小天").values_list("text", flat=True))
    # The exact repeat is dropped; the punctuation variant is kept but queued for arbitration.
    assert stored == sorted(["主人喜欢绘画、弹钢琴和品茶", "主人喜欢绘画、弹钢琴和品茶。", "主人叫张曼婷"])
    assert FactDedupPair.objects.filter(character__name="小天").count() == 1

    llm_server.script(fact_reply("主人叫张曼婷"))
    post_history("cache", "小天", ("human", "再说一遍，我叫张曼婷"))
    # Five minutes after the last check, one new turn is enough for the next batch.
    ExtractionCursor.objects.filter(character__name="小天").update(
        last_check_at=timezone.now() - timedelta(minutes=6)
    )
    facts_extraction_loop()
    assert llm_server.remaining() == 0 and "再说一遍" in prompt_of(llm_server.bodies[1])
    assert Fact.objects.filter(character__name="小天", text="主人叫张曼婷").count() == 1
