"""The reply context of the recall engine: a row scores with its neighbouring turn (no database)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from recall.engine import DEFAULT, Candidate, RecallIndex
from tests.recall.support import turn

# Pure tests, but the session's startup fixture needs the test database to exist when run alone.
pytestmark = pytest.mark.django_db

LEXICAL = replace(DEFAULT, name="test-context-bm25", use_vectors=False)
NO_CONTEXT = replace(LEXICAL, name="test-no-context", context_weight=0.0)


def filler(start: int) -> list[Candidate]:
    # Rows far apart in time that share no word with the queries: they only make the corpus big enough
    # for the query terms' IDF to count.
    return [
        turn(start + i, f"Weather talk again, number {i}", entity="neko", minutes=10_000 * (i + 1))
        for i in range(10)
    ]


def conversation(*, reply_entity: str = "neko", reply_minutes: float = 1, reply_pool: str = "facts"):
    return [
        turn(1, "Did you paint the lake at sunrise?", entity="master", minutes=0),
        turn(
            2,
            "Yes, last summer; it took me three weeks.",
            entity=reply_entity,
            minutes=reply_minutes,
            pool=reply_pool,
        ),
        turn(3, "The lake was cold when we swam there.", entity="master", minutes=5_000),
        *filler(10),
    ]


def ids(index: RecallIndex, query: str, config=LEXICAL, **kwargs) -> list[str]:
    return [h.candidate.id for h in index.search(query, config=config, **kwargs)]


def test_the_reply_to_a_matching_turn_ranks_by_that_turn() -> None:
    index = RecallIndex(conversation())
    # The reply shares no word with the question: alone it is not a candidate at all.
    assert ids(index, "paint the lake at sunrise", NO_CONTEXT) == ["t1", "t3"]
    # With its neighbour's score it comes right after it, above a row that shares one word.
    assert ids(index, "paint the lake at sunrise") == ["t1", "t2", "t3"]


def test_two_rows_of_one_speaker_give_no_context() -> None:
    # Memories of one person (no reply between them) do not lift each other.
    index = RecallIndex(conversation(reply_entity="master"))
    assert ids(index, "paint the lake at sunrise") == ["t1", "t3"]
    anyone = replace(LEXICAL, name="test-context-any", context_replies=False)
    assert ids(index, "paint the lake at sunrise", anyone) == ["t1", "t2", "t3"]


def test_a_neighbour_outside_the_gap_or_another_pool_gives_no_context() -> None:
    later = RecallIndex(conversation(reply_minutes=DEFAULT.context_gap / 60 + 1))
    assert ids(later, "paint the lake at sunrise") == ["t1", "t3"]
    other_pool = RecallIndex(conversation(reply_pool="raw"))
    assert ids(other_pool, "paint the lake at sunrise") == ["t1", "t3"]


def test_a_reply_appended_after_the_build_takes_context_from_the_row_before() -> None:
    rows = conversation()
    index = RecallIndex([rows[2], *rows[3:], rows[0]])
    index.apply(pool="facts", upserts=[rows[1]])
    assert ids(index, "paint the lake at sunrise") == ["t1", "t2", "t3"]
    # Removed, its neighbour lends nothing (the tombstoned row keeps no score).
    index.apply(pool="facts", removed=[1])
    assert ids(index, "paint the lake at sunrise") == ["t3"]


def test_the_cosine_path_takes_context_above_its_threshold() -> None:
    # The query's vector is the question's; the reply's own cosine is below the threshold.
    rows = [
        turn(1, "Did you paint it?", entity="master", minutes=0, vector=[1.0, 0.0, 0.0]),
        turn(2, "Yes, last summer.", entity="neko", minutes=1, vector=[0.1, 0.0, 1.0]),
        turn(3, "Something else.", entity="master", minutes=5_000, vector=[0.5, 1.0, 0.0]),
    ]
    vectors_only = replace(DEFAULT, name="test-context-cosine", use_lexical=False)
    q = np.array([1.0, 0.0, 0.0])
    without = replace(vectors_only, name="test-context-cosine-off", context_weight=0.0)
    assert ids(RecallIndex(rows), "paint", without, query_vector=q) == ["t1", "t3"]
    assert ids(RecallIndex(rows), "paint", vectors_only, query_vector=q) == ["t1", "t2", "t3"]


def test_an_edited_turn_keeps_its_neighbours_as_a_rebuilt_index_has_them() -> None:
    # An edit tombstones the row and appends it at the end; neighbours go by key, not by row.
    rows = conversation()
    edited = replace(rows[0], text="Did you paint the lake at sunrise, or at dusk?")
    index = RecallIndex(rows)
    index.apply(pool="facts", upserts=[edited])
    rebuilt = RecallIndex([edited, *rows[1:]])
    got = index.search("paint the lake at sunrise", config=LEXICAL)
    want = rebuilt.search("paint the lake at sunrise", config=LEXICAL)
    assert [h.candidate.id for h in got] == [h.candidate.id for h in want] == ["t1", "t2", "t3"]
    assert [h.score for h in got] == [h.score for h in want]


def test_rows_of_different_entity_but_no_known_speaker_give_no_context() -> None:
    # Facts say whom they are about, not which turn they came from: a fact about the master beside one
    # about the character is not a question and its answer.
    rows = conversation()
    rows = [replace(rows[0], speaker=None), replace(rows[1], speaker=None), *rows[2:]]
    assert [r.entity for r in rows[:2]] == ["master", "neko"]
    assert ids(RecallIndex(rows), "paint the lake at sunrise") == ["t1", "t3"]


def test_turns_of_one_entity_pair_by_their_speakers() -> None:
    # An original facts.json says "master" of every row; the turns' own speakers still pair them.
    rows = conversation()
    rows = [replace(rows[0], entity="master"), replace(rows[1], entity="master"), *rows[2:]]
    assert [r.speaker for r in rows[:2]] == ["human", "ai"]
    assert ids(RecallIndex(rows), "paint the lake at sunrise") == ["t1", "t2", "t3"]
