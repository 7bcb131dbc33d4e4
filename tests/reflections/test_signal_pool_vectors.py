"""The observation pool of Stage 2 and the keyword hook, ranked with vectors through the kernel reranker
(reference §3.3.3 step 3, §4.6): best cosine against the query texts first; Stage 2 then lets the
summary tier re-rank the coarse list when it is longer than the budget; without vectors the pool is in
evidence order and no re-rank is asked (§6). Real model, loopback LLM."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone

from nekomem.embeddings import get_embedder
from persona.models import PersonaEntry
from recall.backfill import embedding_backfill
from reflections.models import Reflection
from reflections.services import reflections_keyword_hook, reflections_stage2
from reflections.services.signals import OBSERVATION_BUDGET
from tests.facts.factories import make_fact
from tests.persona.factories import make_entry
from tests.recall.support import require_muse
from tests.reflections.factories import make_reflection
from tests.support.llm_server import error, json_content

pytestmark = pytest.mark.django_db

CAT = "主人很喜欢猫，见到流浪猫总会停下来"  # the one observation close to the query fact
SPICY = "主人很能吃辣"  # what the scripted re-rank picks first
FILLER = [f"主人收集了第{n}套旧邮票" for n in range(40)]
RERANK_MARK = '"ranked"'  # the reply shape the re-rank prompt asks for, in every language


def observation(character, text: str, reinforcement: float) -> Reflection:
    return make_reflection(
        character=character,
        text=text,
        status=Reflection.Status.CONFIRMED,
        reinforcement=reinforcement,
        rein_last_signal_at=timezone.now(),
    )


@pytest.fixture
def pool(character) -> dict[str, Reflection]:
    """41 confirmed reflections (more than the budget of 30) and one persona entry, all embedded; the
    cat reflection has the lowest evidence, so evidence order alone never shows it."""
    require_muse()
    assert get_embedder() is not None  # loaded: the pool asks without waiting
    made = {CAT: observation(character, CAT, 0.1), SPICY: observation(character, SPICY, 1.0)}
    for text in FILLER[:39]:
        made[text] = observation(character, text, 2.0)
    make_entry(character=character, text="主人住在海边的小城")
    report = embedding_backfill(character_id=character.pk, queue_pairs=False)
    assert report.reflections == 41 and report.persona == 1
    return made


def prompt_ids(body: dict[str, Any]) -> list[str]:
    content = "\n".join(m["content"] for m in body["messages"])
    return re.findall(r"\[((?:reflection|persona)\.[^\]]+)\]", content)


def is_rerank(body: dict[str, Any]) -> bool:
    return RERANK_MARK in body["messages"][0]["content"]


def candidate_index(body: dict[str, Any], text: str) -> int:
    match = re.search(r"\[(\d+)\] \(evidence [^)]*\) " + re.escape(text), body["messages"][0]["content"])
    assert match, text
    return int(match.group(1))


def test_stage2_ranks_by_vector_then_the_llm_reranks(character, pool, llm_server) -> None:
    make_fact(character=character, text="主人今天在楼下喂了一只橘猫", importance=6)

    def rerank(body: dict[str, Any]) -> Any:
        content = body["messages"][0]["content"]
        assert is_rerank(body) and "主人今天在楼下喂了一只橘猫" in content
        assert "哪些记忆与新内容最相关" in content  # worded in the facts' language (zh)
        # The coarse list: budget × 3 rows at most, the nearest (the cat) first.
        assert candidate_index(body, CAT) == 0
        assert body["messages"][0]["content"].count("\n[") <= OBSERVATION_BUDGET * 3
        return json_content({"ranked": [candidate_index(body, SPICY), 0]})

    llm_server.script(rerank, json_content({"signals": []}))
    result = reflections_stage2(character_id=character.pk)
    assert result.reason == "ran"
    first, second = llm_server.bodies
    assert first["model"] == second["model"] == "test-summary-model"
    ids = prompt_ids(second)
    # The LLM's pick first, then the coarse (vector) order fills the budget.
    assert ids[:2] == [f"reflection.{pool[SPICY].reflection_id}", f"reflection.{pool[CAT].reflection_id}"]
    assert len(ids) == OBSERVATION_BUDGET


def test_a_failed_rerank_keeps_the_vector_order(character, pool, llm_server) -> None:
    make_fact(character=character, text="主人今天在楼下喂了一只橘猫", importance=6)
    llm_server.script(error(500), json_content({"signals": []}))
    assert reflections_stage2(character_id=character.pk).reason == "ran"
    assert len(llm_server.requests) == 2 and is_rerank(llm_server.bodies[0])
    ids = prompt_ids(llm_server.bodies[1])
    assert ids[0] == f"reflection.{pool[CAT].reflection_id}" and len(ids) == OBSERVATION_BUDGET


def test_without_vectors_stage2_takes_evidence_order_and_no_rerank(character, pool, llm_server) -> None:
    make_fact(character=character, text="主人今天在楼下喂了一只橘猫", importance=6)
    llm_server.script(json_content({"signals": []}))
    with override_settings(EMBEDDINGS_ENABLED=False):
        assert reflections_stage2(character_id=character.pk).reason == "ran"
    assert len(llm_server.requests) == 1 and not is_rerank(llm_server.bodies[0])
    ids = prompt_ids(llm_server.bodies[0])
    assert len(ids) == OBSERVATION_BUDGET
    assert f"reflection.{pool[CAT].reflection_id}" not in ids  # lowest evidence: cut
    # The 30 of highest evidence: all fillers (the cat and the spicy one rank below every filler).
    assert set(ids) <= {f"reflection.{pool[text].reflection_id}" for text in FILLER[:39]}


def test_a_stale_vector_is_not_used(character, pool, llm_server) -> None:
    # The cat reflection's text rewritten behind the cache: its vector no longer counts, so it falls
    # behind every embedded row (and, lowest in evidence, out of the coarse order's top).
    Reflection.objects.filter(pk=pool[CAT].pk).update(text="主人很喜欢狗")
    make_fact(character=character, text="主人今天在楼下喂了一只橘猫", importance=6)
    llm_server.script(lambda body: json_content({"ranked": []}), json_content({"signals": []}))
    reflections_stage2(character_id=character.pk)
    assert f"reflection.{pool[CAT].reflection_id}" not in prompt_ids(llm_server.bodies[-1])


def test_keyword_hook_ranks_by_vector_without_a_rerank_call(character, pool, llm_server) -> None:
    llm_server.script(json_content({"targets": []}))
    payload = {"messages": [{"type": "human", "data": {"content": "我不是那种爱猫的人，你搞错了"}}]}
    assert reflections_keyword_hook(character_id=character.pk, payload=payload) == 0
    assert len(llm_server.requests) == 1
    body = llm_server.bodies[0]
    assert body["model"] == "test-emotion-model" and not is_rerank(body)
    ids = prompt_ids(body)
    assert ids[0] == f"reflection.{pool[CAT].reflection_id}" and len(ids) == OBSERVATION_BUDGET


def test_persona_entries_carry_their_vectors_into_the_pool(character, pool) -> None:
    embedder = get_embedder()
    entry = PersonaEntry.objects.get(character=character)
    assert entry.cached_vector(embedder) is not None
