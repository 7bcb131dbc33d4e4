"""Pseudo-relevance feedback of the recall engine: the best rows' own terms as a second query."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from recall.engine import DEFAULT, Candidate, RecallIndex

# Pure tests, but the session's startup fixture needs the test database to exist when run alone.
pytestmark = pytest.mark.django_db

T0 = datetime(2026, 5, 1, 12, tzinfo=UTC)
# Lexical only and without the reply context, so the feedback path is the one thing that differs.
FEEDBACK = replace(DEFAULT, name="test-feedback", use_vectors=False, context_weight=0.0, feedback_docs=1)
NO_FEEDBACK = replace(FEEDBACK, name="test-no-feedback", feedback_docs=0)


def fact(i: int, text: str) -> Candidate:
    when = T0 + timedelta(days=i)
    return Candidate(
        id=f"f{i}", text=text, tier="fact", created_at=when, event_start_at=when, pool="facts", key=i
    )


def corpus() -> list[Candidate]:
    return [
        fact(1, "Caroline adopted a puppy: Luna"),
        fact(2, "Luna chewed through the garden hose again"),
        fact(3, "A puppy calendar hangs in the office kitchen"),
        fact(4, "Caroline went hiking with friends"),
        fact(5, "Caroline baked bread"),
        *(fact(10 + i, f"Weather talk again, number {i}") for i in range(10)),
    ]


def ids(config, query: str) -> list[str]:
    return [h.candidate.id for h in RecallIndex(corpus()).search(query, config=config)]


def test_a_row_sharing_the_best_rows_rare_term_is_found() -> None:
    # "Luna" is the best row's rarest term: the row that says only "Luna" comes in through it.
    assert ids(NO_FEEDBACK, "adopted puppy") == ["f1", "f3"]
    found = ids(FEEDBACK, "adopted puppy")
    assert found[:3] == ["f1", "f3", "f2"]  # the matching rows first, then the row the feedback found
    assert set(found[3:]) == {"f4", "f5"}  # "Caroline", commoner, weighs less than "Luna"


def test_feedback_terms_are_limited_and_weighted_by_rarity() -> None:
    # One term only: of the best row's terms the query does not have, the rarest ("luna", in two rows,
    # before "caroline", in three), so Caroline's other rows stay out.
    one = replace(FEEDBACK, name="test-feedback-one", feedback_terms=1)
    found = ids(one, "adopted puppy")
    assert found[0] == "f1" and set(found) == {"f1", "f2", "f3"}


def test_no_feedback_without_a_first_hit() -> None:
    assert ids(FEEDBACK, "volcano") == []
