"""Recall's BM25 terms per language: Russian, Spanish and Portuguese word forms meet; English is as before."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from nekomem.language import stemming
from nekomem.language.normalize import normalize_for_recall
from nekomem.language.tokens import search_tokens
from recall.engine import BM25_NEKOMEM, LEXICAL_VIEWS, Bm25View, Candidate, RecallIndex

pytestmark = pytest.mark.django_db  # the session's startup fixture needs the test database

T0 = datetime(2026, 5, 1, 12, tzinfo=UTC)


def terms(text: str) -> set[str]:
    return set(search_tokens(text))


@pytest.mark.parametrize(
    ("query", "stored"),
    [
        ("встречи", "У меня была встреча с командой"),
        ("встречу с друзьями", "Вчера мы встречались с друзьями, была хорошая встреча"),
        ("новой работе", "Я рассказал о новый работа"),
        ("¿Cuántas reuniones tuve?", "Tuve una reunión con mi jefe"),
        ("reunion con el jefe", "Tuve una reunión con mi jefe"),
        ("¿Qué películas vimos?", "Vimos una película de terror"),
        ("Quantas reuniões eu tive?", "Tive uma reunião com o chefe"),
        ("a reuniao com o chefe", "Tive uma reunião com o chefe"),
        ("lições de violão", "Comecei uma lição de violão"),
    ],
)
def test_word_forms_of_one_word_share_a_term(query: str, stored: str) -> None:
    assert terms(query) & terms(stored)


def test_function_words_are_not_terms() -> None:
    assert search_tokens("Tive uma reunião com o chefe") == ["tiv", "reunia", "chef"]
    assert search_tokens("¿Qué hice con mi hermana?") == ["hic", "herman"]
    assert search_tokens("Мы были у неё дома") == ["дом"]


def test_russian_stems_before_it_folds() -> None:
    # Folded first (й → и) the two would stay apart as новы / ново.
    assert search_tokens("новый") == search_tokens("новой") == ["нов"]


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Caroline went to the LGBTQ support group", stemming.ENGLISH),
        ("I had a meeting at the café", stemming.ENGLISH),
        ("I met Ana de la Cruz at the gym", stemming.ENGLISH),
        ("reuniões", stemming.SPANISH_OR_PORTUGUESE),
        ("Fui a la playa con mi hermana", stemming.SPANISH),
        ("Fui à praia com a minha irmã", stemming.PORTUGUESE),
        ("o que fiz semana passada", stemming.PORTUGUESE),
        ("que de para", stemming.SPANISH),  # a tie between the two, no Portuguese letters
        ("que de para não", stemming.PORTUGUESE),
    ],
)
def test_latin_language_of_a_text(text: str, language: str) -> None:
    words = normalize_for_recall(text).split()
    assert stemming.latin_language(words, raw_text=text) == language


def test_english_text_keeps_its_porter2_terms() -> None:
    # The zh/en figures of bench/recall_eval.py rest on these staying what they were.
    assert search_tokens("Running dogs") == ["run", "dog"]
    assert search_tokens("She painted a sunrise in the café last weekend") == [
        "paint", "sunris", "cafe", "last", "weekend",
    ]  # fmt: skip
    assert search_tokens("我上週去了咖啡店") == search_tokens("我上周去了咖啡店")


def _row(key: int, text: str) -> Candidate:
    when = T0 + timedelta(hours=key)
    return Candidate(id=f"fact_{key}", text=text, tier="fact", created_at=when, event_start_at=when,
                     pool="fact", key=key)  # fmt: skip


ROWS = [
    "У меня была встреча с командой в понедельник",
    "Мы ходили в кино на новый фильм",
    "Купила новую книгу о путешествиях",
    "Tuve una reunión con mi jefe el lunes",
    "Fuimos al cine a ver una película de terror",
    "Compré un libro sobre viajes",
    "Tive uma reunião com o chefe na segunda",
    "Fomos ao cinema ver um filme de terror",
    "Comprei um livro sobre viagens",
    "Caroline went to the support group",
]
QUERIES = ["встречи с командой", "фильмы", "книги", "reuniones", "películas", "libros", "reuniões",
           "filmes", "livros", "support groups"]  # fmt: skip


def test_changes_applied_by_row_rank_like_a_rebuild() -> None:
    rows = {k: _row(k, text) for k, text in enumerate(ROWS)}
    index = RecallIndex(list(rows.values()), dim=0)
    # Replace two rows, drop one, add two: in every language.
    changed = {3: _row(3, "Tuve dos reuniones largas con mi jefe"), 1: _row(1, "Мы смотрели фильмы дома")}
    added = {20: _row(20, "Tivemos reuniões com a equipe"), 21: _row(21, "Встречи с командой по средам")}
    index.apply(pool="fact", upserts=[*changed.values(), *added.values()], removed=[5])
    live = {**rows, **changed, **added}
    del live[5]
    rebuilt = RecallIndex([live[k] for k in sorted(live)], dim=0)
    for query in QUERIES:
        got = index.search(query, config=BM25_NEKOMEM)
        want = rebuilt.search(query, config=BM25_NEKOMEM)
        assert [h.candidate.id for h in got] == [h.candidate.id for h in want], query
        assert [h.score for h in got] == [h.score for h in want], query
    assert {h.candidate.id for h in index.search("reuniões", config=BM25_NEKOMEM)} == {"fact_20", "fact_6"}
    found = {h.candidate.id for h in index.search("встреча", config=BM25_NEKOMEM)}
    assert found == {"fact_0", "fact_21"}


def test_the_lexical_view_tokenises_index_and_query_alike() -> None:
    view = Bm25View(LEXICAL_VIEWS["words"], ["Tive uma reunião com o chefe", "Fomos ao cinema"], [])
    scores = view.scores("reuniões")
    assert scores[0] > 0 and scores[1] == 0
