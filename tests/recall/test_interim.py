"""While a character's index is built, ``interim_index`` answers from the rows whose stored text holds
the query's words as that text writes them: not the lexical views' stems or cross-word 3-grams, which
no row holds as a substring, and in either Chinese script."""

from __future__ import annotations

import pytest

from recall.engine import RecallIndex
from recall.interim import FEW_ROWS, interim_index, interim_terms
from recall.selectors import fact_candidates
from tests.facts.factories import FactFactory
from tests.recent.factories import RawMessageFactory

pytestmark = pytest.mark.django_db


def interim_answer(character_id: int, query: str) -> list[str]:
    index = interim_index(character_id=character_id, query=query, stop_names=(), space=None)
    return [hit.candidate.text for hit in index.search(query)]


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        # The query's stem "appli" is no substring of "applying" (whose stem it is).
        ("Melanie is applying for the gallery job", "Did she apply?"),
        # Every 3-gram of the query spans two of its words; the row holds its 2-gram 橘猫.
        ("主人养了一只橘猫", "橘猫平时最喜欢吃什么"),
        # Stored in Traditional characters, asked in Simplified ones.
        ("主人養了一隻橘貓，叫團子", "橘猫"),
    ],
)
def test_a_row_holding_the_query_words_only_as_written_is_found(stored: str, query: str) -> None:
    fact = FactFactory.create(text=stored)
    FactFactory.create(character=fact.character, text="Caroline went hiking in the mountains")
    assert interim_answer(fact.character_id, query) == [stored]


def test_a_query_of_function_words_reads_rows_holding_them_when_its_content_words_find_none() -> None:
    fact = FactFactory.create(text="What the weather was like when we met")
    assert interim_terms("What was it?", ()).first == []
    assert interim_answer(fact.character_id, "What was it?") == [fact.text]


def test_a_word_that_occurs_only_inside_another_word_finds_no_row() -> None:
    fact = FactFactory.create(text="The team will compete on Sunday")
    assert interim_answer(fact.character_id, "pet") == []


def test_a_function_word_the_query_capitalises_is_looked_for_in_that_case() -> None:
    query = "Is Oscar Melanie's pet?"
    assert interim_terms(query, ()).cased == frozenset({"Is"})
    assert interim_terms(query.lower(), ()).cased == frozenset()
    # No row holds the content words; the built index still answers through "Is", which its views keep
    # only as written. Newer rows writing "is" must not crowd that row out of the few read for it.
    answer = FactFactory.create(text="Is the cello still in the hallway")
    for i in range(FEW_ROWS + 20):
        FactFactory.create(character=answer.character, text=f"it is raining again, day {i}")
    rows = fact_candidates(character_id=answer.character_id, space=None)
    built = RecallIndex(rows, stop_names=(), dim=None)
    assert answer.text in [hit.candidate.text for hit in built.search(query)]
    assert answer.text in interim_answer(answer.character_id, query)


def test_a_capitalised_function_word_is_found_in_a_raw_turn_at_the_start_of_its_text() -> None:
    fact = FactFactory.create(text="an unrelated fact about gardening")
    turn = RawMessageFactory.create(
        character=fact.character, message='{"type": "human", "data": {"content": "Is it late?"}}'
    )
    index = interim_index(character_id=fact.character_id, query="Is Oscar here?", stop_names=(), space=None)
    assert f"raw_{turn.pk}" in {hit.candidate.id for hit in index.search("Is Oscar here?")}
