"""The reply context pairs a question and its answer by what the conversation records (the raw log's
roles and order), never by ``entity``: an original facts.json says "master" of every fact."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from tests.recall.support import fact_entry, import_facts

pytestmark = pytest.mark.django_db
NAME = "小满"
QUESTION = "Did you paint the lake at sunrise?"
ANSWER = "Yes, last summer; it took me three weeks."


def ranked(client, query: str, config: str) -> list[dict]:
    body = {"query": query, "explain": True, "config": config}
    answer = client.post(f"/query_memory/{NAME}", data=json.dumps(body), content_type="application/json")
    assert answer.status_code == 200
    return answer.json()["results"]


def test_an_import_of_master_facts_still_pairs_a_question_turn_with_its_answer(
    client, post_history, tmp_path: Path
) -> None:
    now = timezone.now()
    facts = [
        fact_entry(text, now - timedelta(days=i + 1))
        for i, text in enumerate(["Master keeps a red bicycle", "Master reads poetry at night"])
    ]
    assert {f["entity"] for f in facts} == {"master"}
    import_facts(tmp_path, NAME, facts)
    assert post_history("cache", NAME, ("human", QUESTION), ("ai", ANSWER)).status_code == 200

    with_context = ranked(client, "paint the lake at sunrise", "bm25-nekomem")
    assert [r["text"] for r in with_context[:2]] == [QUESTION, ANSWER]
    assert {r["explain"]["pool"] for r in with_context[:2]} == {"raw turns"}
    # The answer shares no word with the query: without the reply context it is not found at all.
    without = ranked(client, "paint the lake at sunrise", "bm25")
    assert ANSWER not in [r["text"] for r in without]
