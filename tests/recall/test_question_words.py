"""Question words out of the query's lexical match (``recall.questions.without_question_words``)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from recall.engine import DEFAULT, RecallIndex
from recall.questions import without_question_words
from tests.recall.support import turn

# Pure tests, but the session's startup fixture needs the test database to exist when run alone.
pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("貓咪生了什麼病？", "貓咪生了 病？"),
        ("猫咪生了什么病？", "猫咪生了 病？"),
        ("猫の病気は何だった？", "猫の病気は だった？"),
        ("What did Caroline paint?", "  did Caroline paint?"),
        ("¿Qué pintó Caroline?", "¿  pintó Caroline?"),
        ("Что нарисовала Кэролайн?", "  нарисовала Кэролайн?"),
        ("什麼？", "什麼？"),  # nothing else would be left: the query as it is
    ],
)
def test_question_words_are_taken_out(query: str, expected: str) -> None:
    assert without_question_words(query) == expected


def test_a_question_word_no_longer_finds_the_other_questions() -> None:
    rows = [
        turn(1, "小晴: 面試他們問了什麼？", entity="neko", minutes=0),
        turn(2, "阿哲: 問了我作品集裡的角色設計", entity="master", minutes=1),
        turn(3, "阿哲: 我家的貓咪一直吐，帶牠去看獸醫", entity="master", minutes=5_000),
        turn(4, "小晴: 醫生說是什麼問題？", entity="neko", minutes=5_001),
        turn(5, "阿哲: 說是腸胃炎，吃了藥就好了", entity="master", minutes=5_002),
        *(turn(10 + i, f"天氣很好 {i}", entity="neko", minutes=20_000 * (i + 1)) for i in range(8)),
    ]
    index = RecallIndex(rows)
    # Off by default since issue 50 (nothing bought held back); the mechanism is a configuration's switch.
    lexical = replace(DEFAULT, name="test-question-words", use_vectors=False, question_words_out=True)
    kept = replace(lexical, name="test-question-words-kept", question_words_out=False)
    # Kept, "什麼" ranks the interview question (and, by the reply context, its answer) with the cat's.
    assert {"t1", "t2"} <= {h.candidate.id for h in index.search("貓咪生了什麼病？", config=kept)}
    # Out, only the cat's conversation matches.
    found = [h.candidate.id for h in index.search("貓咪生了什麼病？", config=lexical)]
    assert found[0] == "t3" and not {"t1", "t2"} & set(found)
