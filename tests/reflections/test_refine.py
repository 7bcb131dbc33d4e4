"""Reflection refine (reference §3.8): pending and confirmed reflections of one entity cluster by
their stored vectors; the model's merge / split / modify / discard are written with the layer's events
and memory-change log. Scoped reflections are refined per subject, never with private ones."""

from __future__ import annotations

import pytest
from django.utils import timezone

from nekomem.characters.models import MemoryChange
from nekomem.journal.models import AppliedSentinel, Event
from nekomem.journal.services import events_reconcile
from reflections.models import RECALL_POOL, Reflection
from reflections.services import reflections_refine
from tests.reflections.factories import make_reflection
from tests.support.llm_server import json_content
from tests.support.vectors import axis, store_vector

pytestmark = pytest.mark.django_db


def reflection(character, text: str, vector, **fields) -> Reflection:
    return store_vector(make_reflection(character=character, text=text, **fields), vector)


def prompt(llm_server, n: int = 0) -> str:
    return llm_server.requests[n].json["messages"][0]["content"]


def test_merge_marks_the_others_merged_into_the_first_with_the_larger_evidence(character, llm_server):
    first = reflection(character, "主人似乎很喜欢猫", axis(0), reinforcement=0.5, status="confirmed")
    second = reflection(character, "主人看起来特别喜欢猫", axis(0, 0.05), reinforcement=1.8)
    denied = reflection(character, "主人好像很喜欢猫咪", axis(0, 0.08), status="denied")
    llm_server.script(json_content([{"action": "merge", "ids": [0, 1], "text": "主人非常喜欢猫"}]))
    report = reflections_refine(character_id=character.pk)
    assert (report.clusters, report.actions) == (1, 1)
    assert "好像很喜欢猫咪" not in prompt(llm_server)  # terminal statuses are not refined
    first.refresh_from_db()
    second.refresh_from_db()
    denied.refresh_from_db()
    assert first.text == "主人非常喜欢猫" and first.reinforcement == 1.8 and first.status == "confirmed"
    assert first.extra["merged_from_ids"] == [second.reflection_id]
    assert (second.status, second.absorbed_into) == ("merged", first.reflection_id)
    assert denied.status == "denied"
    reasons = [e.payload.get("reason") for e in Event.objects.filter(type="reflection.state_changed")]
    assert reasons.count("refine_merge") == 2
    # Recall's index follows the memory-change log of the reflection pool.
    changed = set(MemoryChange.objects.filter(pool=RECALL_POOL).values_list("row", flat=True))
    assert {first.pk, second.pk} <= changed


def test_split_adds_a_reflection_and_discard_archives(character, llm_server):
    mixed = reflection(character, "主人喜欢猫，也在学日语", axis(0), status="confirmed", reinforcement=1.2)
    covered = reflection(character, "主人喜欢猫", axis(0, 0.05))
    llm_server.script(
        json_content(
            [
                {"action": "split", "id": 0, "texts": ["主人喜欢猫", "主人在学日语"]},
                {"action": "discard", "id": 1},
            ]
        )
    )
    assert reflections_refine(character_id=character.pk).actions == 2
    mixed.refresh_from_db()
    covered.refresh_from_db()
    part = Reflection.objects.get(text="主人在学日语")
    assert mixed.text == "主人喜欢猫"
    assert (part.status, part.reinforcement, part.extra["split_from_id"]) == (
        "confirmed",
        1.2,
        mixed.reflection_id,
    )
    assert Event.objects.filter(type="reflection.synthesized", payload__id=part.reflection_id).exists()
    assert covered.status == "archived" and covered.archive_shard_path


def test_modify_keeps_the_id_and_status(character, llm_server):
    vague = reflection(character, "主人好像有点喜欢运动吧", axis(0))
    reflection(character, "主人喜欢运动", axis(0, 0.05))
    llm_server.script(json_content([{"action": "modify", "id": 0, "text": "主人喜欢跑步和游泳"}]))
    reflections_refine(character_id=character.pk, now=timezone.now())
    vague.refresh_from_db()
    assert (vague.text, vague.status) == ("主人喜欢跑步和游泳", "pending")
    assert vague.last_refine_cluster_hash and vague.last_refine_at is not None


def test_entities_and_subjects_never_share_a_cluster(character, llm_server):
    reflection(character, "主人喜欢羽毛球", axis(0))
    reflection(character, "主人爱打羽毛球", axis(0, 0.05))
    reflection(character, "我喜欢羽毛球", axis(0, 0.1), entity="neko")
    reflection(character, "小明喜欢羽毛球", axis(0, 0.12), subject_key="qq:1", status="confirmed")
    reflection(character, "小明爱打羽毛球", axis(0, 0.15), subject_key="qq:1", status="confirmed")
    reflection(character, "小红喜欢羽毛球", axis(0, 0.2), subject_key="qq:2", status="confirmed")
    llm_server.fallback = lambda body: json_content([])
    assert reflections_refine(character_id=character.pk).clusters == 1
    private = prompt(llm_server, 0)
    assert "主人喜欢" in private and "我喜欢" not in private and "小明" not in private
    assert reflections_refine(character_id=character.pk, scoped=True).clusters == 1
    scoped = llm_server.requests[1].json
    assert scoped["model"] == "test-summary-model"
    assert "小明喜欢" in prompt(llm_server, 1) and "主人" not in prompt(llm_server, 1)
    assert "小红" not in prompt(llm_server, 1)


def test_refine_records_every_change_it_saves_and_replay_restores_it(character, llm_server):
    first = reflection(character, "主人似乎很喜欢猫", axis(0), status="confirmed")
    second = reflection(character, "主人看起来特别喜欢猫", axis(0, 0.05))
    third = reflection(character, "主人好像很喜欢猫咪", axis(0, 0.08))
    start = max(Event.objects.values_list("seq", flat=True), default=0)
    llm_server.script(json_content([{"action": "merge", "ids": [0, 1], "text": "主人非常喜欢猫"}]))
    assert reflections_refine(character_id=character.pk).actions == 1
    first.refresh_from_db()
    third.refresh_from_db()
    stamped = {
        e.payload["reflection_id"]: e.payload
        for e in Event.objects.filter(type="reflection.state_changed", payload__reason="refine_seen")
    }
    # The survivors are stamped with their event; the merged one leaves the pool and is not.
    assert set(stamped) == {first.reflection_id, third.reflection_id}
    assert stamped[third.reflection_id]["last_refine_cluster_hash"] == third.last_refine_cluster_hash
    assert third.last_refine_at is not None
    assert stamped[third.reflection_id]["last_refine_at"] == third.last_refine_at.isoformat()

    # Lose the view's writes since the pass began (a restore, a crash): the events bring them back.
    Reflection.objects.filter(pk__in=[first.pk, third.pk]).update(
        last_refine_cluster_hash=None, last_refine_at=None, extra={}, text="主人似乎很喜欢猫"
    )
    AppliedSentinel.objects.filter(character=character).update(last_applied_seq=start)
    assert events_reconcile(character_id=character.pk).applied >= 3
    for row, expected in ((first, first), (third, third)):
        replayed = Reflection.objects.get(pk=row.pk)
        assert replayed.last_refine_cluster_hash == expected.last_refine_cluster_hash
        assert replayed.last_refine_at == expected.last_refine_at
    replayed = Reflection.objects.get(pk=first.pk)
    assert replayed.text == "主人非常喜欢猫"
    assert replayed.extra["merged_from_ids"] == [second.reflection_id]
