"""A resolved pair stays as the record of what the arbiter decided, even when it deleted a fact."""

from __future__ import annotations

import pytest
from django.contrib.admin.sites import site
from django.test import Client

from facts.models import Fact, FactDedupPair
from facts.services import dedup_pair_queue, dedup_pairs_arbitrate, fact_delete
from tests.facts.conftest import T0
from tests.facts.factories import make_fact
from tests.support.llm_server import json_content

pytestmark = pytest.mark.django_db


def queue(character, old_text: str, new_text: str) -> tuple[Fact, Fact]:
    old = make_fact(character=character, text=old_text, importance=5)
    new = make_fact(character=character, text=new_text, importance=8)
    dedup_pair_queue(character_id=character.pk, candidate=new, existing=old, cosine=0.9)
    return new, old


def test_merge_and_replace_keep_the_pair_with_ids_texts_and_decision(character, llm_server):
    merged_new, merged_old = queue(character, "阿凛喜欢猫", "阿凛很喜欢猫")
    replaced_new, replaced_old = queue(character, "阿凛住在大阪", "阿凛搬到了东京")
    kept_new, kept_old = queue(character, "阿凛会弹吉他", "阿凛会弹钢琴")
    llm_server.script(
        json_content(
            [
                {"index": 0, "action": "merge", "text": "阿凛非常喜欢猫"},
                {"index": 1, "action": "replace"},
                {"index": 2, "action": "keep_both"},
            ]
        )
    )

    assert dedup_pairs_arbitrate(character_id=character.pk, now=T0).resolved == 3

    merge, replace, keep = FactDedupPair.objects.order_by("pk")
    assert (merge.status, merge.decision, merge.resolved_at) == ("done", "merge", T0)
    assert merge.candidate is None and merge.existing_id == merged_old.pk  # the candidate was merged away
    assert (merge.candidate_fact_id, merge.existing_fact_id) == (merged_new.fact_id, merged_old.fact_id)
    assert (merge.candidate_text, merge.existing_text) == ("阿凛很喜欢猫", "阿凛喜欢猫")
    assert merge.merged_text == "阿凛非常喜欢猫"

    assert (replace.decision, replace.existing, replace.candidate_id) == ("replace", None, replaced_new.pk)
    assert replace.existing_fact_id == replaced_old.fact_id and replace.existing_text == "阿凛住在大阪"
    assert replace.merged_text == "阿凛搬到了东京"
    assert not Fact.objects.filter(pk=replaced_old.pk).exists()

    assert (keep.decision, keep.candidate_id, keep.existing_id, keep.merged_text) == (
        "keep_both",
        kept_new.pk,
        kept_old.pk,
        "",
    )


def test_a_pair_whose_fact_was_deleted_is_closed_without_the_llm(character, llm_server):
    new, old = queue(character, "阿凛喜欢猫", "阿凛很喜欢猫")
    fact_delete(character_id=character.pk, fact_id=old.fact_id)
    pair = FactDedupPair.objects.get()
    assert pair.status == "pending" and pair.existing is None and pair.existing_fact_id == old.fact_id

    result = dedup_pairs_arbitrate(character_id=character.pk, now=T0)

    assert result.reason == "queue empty" and llm_server.requests == []
    pair.refresh_from_db()
    assert (pair.status, pair.decision, pair.resolved_at) == ("done", "fact_gone", T0)
    assert Fact.objects.filter(pk=new.pk).exists()


def test_the_admin_shows_the_decision_record(character, llm_server, django_user_model):
    new, old = queue(character, "阿凛住在大阪", "阿凛搬到了东京")
    llm_server.script(json_content([{"index": 0, "action": "replace"}]))
    dedup_pairs_arbitrate(character_id=character.pk, now=T0)
    admin_user = django_user_model.objects.create_superuser("root", "root@example.com", "pw")
    client = Client()
    client.force_login(admin_user)

    listing = client.get("/admin/facts/factdeduppair/").content.decode()
    assert old.fact_id in listing and new.fact_id in listing and "replace" in listing
    pair = FactDedupPair.objects.get()
    detail = client.get(f"/admin/facts/factdeduppair/{pair.pk}/change/").content.decode()
    assert "阿凛住在大阪" in detail and "阿凛搬到了东京" in detail
    assert FactDedupPair in site._registry
