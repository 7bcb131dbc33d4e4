from __future__ import annotations

import json
import random
from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from nekomem.runtime.switches import POWERFUL_MEMORY, switch_set
from reflections.models import Reflection, SurfacedReflection
from reflections.services import followup_topics, reflections_feedback_check, reflections_record_surfaced
from tests.reflections.factories import make_reflection
from tests.support.llm_server import error, json_content

pytestmark = pytest.mark.django_db

PAST = timedelta(minutes=5)


def turn(*pairs: tuple[str, str]) -> dict:
    return {"messages": [{"type": kind, "data": {"content": text}} for kind, text in pairs]}


def test_candidates_are_pending_past_their_cool_down_with_a_non_negative_score(character):
    now = timezone.now()
    eligible = make_reflection(character=character, next_eligible_at=now - PAST)
    make_reflection(character=character, next_eligible_at=now + PAST)  # cooling down
    make_reflection(character=character, status=Reflection.Status.CONFIRMED, next_eligible_at=now - PAST)
    make_reflection(
        character=character, disputation=1.0, disp_last_signal_at=now, next_eligible_at=now - PAST
    )
    assert followup_topics(character_id=character.pk, now=now) == [eligible]


def test_more_than_three_are_drawn_by_score_weight_without_replacement(character):
    now = timezone.now()
    strong = make_reflection(
        character=character, reinforcement=1.5, rein_last_signal_at=now, next_eligible_at=now - PAST
    )
    weak = [make_reflection(character=character, next_eligible_at=now - PAST) for _ in range(4)]
    rng = random.Random(3)
    seen: Counter[str] = Counter()
    for _ in range(2000):
        drawn = followup_topics(character_id=character.pk, now=now, rng=rng)
        assert len(drawn) == 3 and len(set(drawn)) == 3
        seen.update(r.reflection_id for r in drawn)
    # Weight 2.0 against 0.5: the strong one is in nearly every draw, each weak one in about half.
    assert seen[strong.reflection_id] / 2000 > 0.9
    assert all(0.35 < seen[w.reflection_id] / 2000 < 0.7 for w in weak)


def test_followup_topics_route_does_not_mark_and_record_surfaced_does(client, character):
    now = timezone.now()
    reflection = make_reflection(character=character, next_eligible_at=now - PAST, feedback="ignored")
    topics = client.get("/followup_topics/小天").json()["topics"]
    assert [t["id"] for t in topics] == [reflection.reflection_id]
    assert client.get("/followup_topics/小天").json()["topics"] != []  # still eligible: nothing marked

    body = json.dumps({"reflection_ids": [reflection.reflection_id, "ref_unknown"]})
    assert client.post("/record_surfaced/小天", data=body, content_type="application/json").json() == {
        "ok": True
    }
    reflection.refresh_from_db()
    assert reflection.feedback is None
    assert reflection.next_eligible_at is not None
    assert reflection.next_eligible_at > now + timedelta(minutes=29)
    row = SurfacedReflection.objects.get()
    assert (row.reflection_id, row.text, row.feedback) == (reflection.reflection_id, reflection.text, None)
    assert client.get("/followup_topics/小天").json() == {"topics": []}


def test_record_surfaced_refuses_a_body_without_a_list(client, character):
    response = client.post(
        "/record_surfaced/小天", data=json.dumps({"reflection_ids": "x"}), content_type="application/json"
    )
    assert response.status_code == 422


def test_denied_feedback_adds_disputation_and_denies(character, llm_server):
    reflection = make_reflection(character=character, reinforcement=0.4, rein_last_signal_at=timezone.now())
    reflections_record_surfaced(character_id=character.pk, reflection_ids=[reflection.reflection_id])
    llm_server.script(json_content([{"reflection_id": reflection.reflection_id, "feedback": "denied"}]))
    assert (
        reflections_feedback_check(character_id=character.pk, payload=turn(("human", "不是这样的，你误会了")))
        == 1
    )
    reflection.refresh_from_db()
    assert reflection.disputation == 1.0 and reflection.status == Reflection.Status.DENIED
    assert reflection.denied_at is not None and SurfacedReflection.objects.get().feedback == "denied"


def test_ignored_feedback_takes_two_tenths_of_reinforcement(character, llm_server):
    switch_set(name=POWERFUL_MEMORY, enabled=True)
    reflection = make_reflection(character=character, reinforcement=0.4, rein_last_signal_at=timezone.now())
    reflections_record_surfaced(character_id=character.pk, reflection_ids=[reflection.reflection_id])
    llm_server.script(json_content([{"reflection_id": reflection.reflection_id, "feedback": "ignored"}]))
    reflections_feedback_check(character_id=character.pk, payload=turn(("human", "今天吃什么好呢")))
    reflection.refresh_from_db()
    assert reflection.reinforcement == pytest.approx(0.2) and reflection.status == Reflection.Status.PENDING


def test_no_llm_call_without_open_surfaced_rows_or_without_user_messages(character, llm_server):
    reflection = make_reflection(character=character)
    assert reflections_feedback_check(character_id=character.pk, payload=turn(("human", "你好"))) == 0
    reflections_record_surfaced(character_id=character.pk, reflection_ids=[reflection.reflection_id])
    assert reflections_feedback_check(character_id=character.pk, payload=turn(("ai", "还记得吗"))) == 0
    assert llm_server.requests == []


def test_an_unknown_id_in_the_reply_changes_nothing(character, llm_server):
    reflection = make_reflection(character=character)
    reflections_record_surfaced(character_id=character.pk, reflection_ids=[reflection.reflection_id])
    llm_server.script(json_content([{"reflection_id": "ref_other", "feedback": "confirmed"}]))
    assert reflections_feedback_check(character_id=character.pk, payload=turn(("human", "嗯嗯"))) == 0
    assert SurfacedReflection.objects.get().feedback is None


def test_a_failing_provider_leaves_the_entries_open_for_the_next_turn(character, llm_server):
    reflection = make_reflection(character=character)
    reflections_record_surfaced(character_id=character.pk, reflection_ids=[reflection.reflection_id])
    llm_server.script(error(500), error(500), error(500))
    assert reflections_feedback_check(character_id=character.pk, payload=turn(("human", "嗯"))) == 0
    assert SurfacedReflection.objects.get().feedback is None
    llm_server.script(json_content([{"reflection_id": reflection.reflection_id, "feedback": "confirmed"}]))
    assert reflections_feedback_check(character_id=character.pk, payload=turn(("human", "对的"))) == 1
