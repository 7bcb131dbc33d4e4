"""Recall ranking by the query's language and kind: the vector mix of a fused space, when-questions, and
the fusion variants the benchmark compares (no database beyond the session's startup)."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from nekomem.language.codes import SUPPORTED_LANGUAGES
from recall.engine import DEFAULT, Candidate, RecallIndex, vector_mix
from recall.engine.configs import CONFIGS
from recall.engine.fusion import with_slots
from recall.questions import asks_when, says_when
from recall.services.query import query_language

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 5, 1, 12, tzinfo=UTC)
PARTS = ["muse-v3-int8", "minilm-l6-int8"]

# One when-question and one memory that says when, per locale (and a look-alike that does not).
WHEN = {
    "zh": ("我们什么时候去的海边？", "昨天我们去了海边", "我们去了海边"),
    "zh-TW": ("我們什麼時候去的海邊？", "上週我們去了海邊", "我們去了海邊"),
    "en": ("When did Caroline go to the support group?", "I went to the support group yesterday", "I went"),
    "ja": ("いつ海に行ったっけ？", "先週海に行った", "海に行った"),
    "ko": ("우리 언제 바다에 갔었지?", "어제 바다에 갔어", "바다에 갔어"),
    "ru": ("Когда мы ездили на море?", "Вчера мы ездили на море", "Мы ездили на море"),
    "es": ("¿Cuándo fuimos a la playa?", "Ayer fuimos a la playa", "Fuimos a la playa"),
    "pt": ("Quando fomos à praia?", "Ontem fomos à praia", "Fomos à praia"),
}


def test_every_locale_has_a_when_example() -> None:
    assert set(WHEN) == set(SUPPORTED_LANGUAGES)


@pytest.mark.parametrize("language", sorted(WHEN))
def test_when_questions_and_dated_words_in_every_locale(language: str) -> None:
    question, dated, plain = WHEN[language]
    assert asks_when(question)
    assert not asks_when(dated) and not asks_when(plain)
    assert says_when(dated)
    assert not says_when(plain)


def test_look_alikes_are_not_when_questions() -> None:
    assert not asks_when("いつも何を食べてる？")  # "always", not "when"
    assert not asks_when("What did Caroline paint?")
    assert not asks_when("我喜欢吃什么？")


def cand(i: int, text: str, *, dated: bool = True, vector=None) -> Candidate:
    when = T0 + timedelta(days=i) if dated else None
    return Candidate(id=f"f{i}", text=text, tier="fact", created_at=when, event_start_at=when, vector=vector)


def test_a_when_question_raises_the_dated_rows_that_say_when() -> None:
    rows = [
        cand(1, "Caroline talked about the support group and the support group people"),
        cand(2, "Caroline went to the support group yesterday"),
        cand(3, "Caroline: the support group is tomorrow, and the support group is great", dated=False),
    ]
    index = RecallIndex(rows)
    query = "When did Caroline go to the support group?"
    config = replace(DEFAULT, when_bonus=5.0)  # large enough to decide the order whatever BM25 says
    plain = [h.candidate.id for h in index.search(query, config=config)]
    asked = [h.candidate.id for h in index.search(query, config=config, asks_when=True)]
    assert asked[0] == "f2"  # dated and says "yesterday"
    assert asked[1:] == [i for i in plain if i != "f2"]  # the undated "tomorrow" row is not raised
    assert [
        h.candidate.id for h in index.search(query, config=replace(config, when_bonus=0.0), asks_when=True)
    ] == plain


def test_a_scaled_query_vector_is_used_as_given() -> None:
    a = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    b = np.array([0.6, 0.8, 0.0, 0.0], dtype=np.float32)
    index = RecallIndex([cand(1, "alpha", vector=a), cand(2, "beta", vector=b)])
    q = np.array([0.5, 0.0, 0.0, 0.0], dtype=np.float32)  # not a unit vector
    config = replace(DEFAULT, use_lexical=False, cosine_threshold=0.0)
    scaled = {
        h.candidate.id: h.paths["cosine"].score
        for h in index.search("x", config=config, query_vector=q, query_scaled=True)
    }
    unit = {h.candidate.id: h.paths["cosine"].score for h in index.search("x", config=config, query_vector=q)}
    assert scaled == pytest.approx({"f1": 0.5, "f2": 0.3})
    assert unit == pytest.approx({"f1": 1.0, "f2": 0.6})


def test_a_fused_space_mixed_by_language_ranks_by_the_weighted_cosines() -> None:
    # Rows as the fused profile stores them: [muse / √2, minilm / √2]. Row 1 is close in "muse" only,
    # row 2 in "minilm" only; the query is the same in both models.
    r2 = math.sqrt(2)
    m1, n1 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    m2, n2 = np.array([0.0, 1.0]), np.array([1.0, 0.0])
    qm, qn = np.array([1.0, 0.0]), np.array([1.0, 0.0])
    rows = [
        cand(1, "one", vector=np.concatenate([m1, n1]) / r2),
        cand(2, "two", vector=np.concatenate([m2, n2]) / r2),
    ]
    index = RecallIndex(rows)
    config = replace(DEFAULT, use_lexical=False, cosine_threshold=0.0)

    def ranked(language: str) -> dict[str, float]:
        mix = vector_mix(config, language, PARTS)
        assert mix is not None
        wm, wn = mix
        q = np.concatenate([qm * wm * r2, qn * wn * r2]).astype(np.float32)
        hits = index.search("x", config=config, query_vector=q, query_scaled=True)
        return {h.candidate.id: h.paths["cosine"].score for h in hits}

    assert ranked("zh") == pytest.approx({"f1": 1.0})  # MUSE alone: row 2's cosine is 0, under any threshold
    assert ranked("en") == pytest.approx({"f1": 0.5, "f2": 0.5})  # the mean of both models


def test_vector_mix_by_language_and_configuration() -> None:
    assert vector_mix(DEFAULT, "en", PARTS) == (0.5, 0.5)
    for language in ("zh", "zh-TW", "ja", "ko", "ru", "es", "pt"):
        assert vector_mix(DEFAULT, language, PARTS) == (1.0, 0.0)
    assert vector_mix(replace(DEFAULT, vector_mix="mean"), "zh", PARTS) is None
    assert vector_mix(replace(DEFAULT, vector_mix="first"), "en", PARTS) == (1.0, 0.0)
    assert vector_mix(DEFAULT, "en", ["some-other-model"]) is None  # a space the table does not know


@pytest.mark.parametrize(
    ("query", "declared", "expected"),
    [
        ("When did Caroline go to the support group?", None, "en"),
        ("我们什么时候去的海边？", None, "zh"),
        ("いつ海に行ったっけ？", None, "ja"),
        ("¿Qué hicimos el fin de semana en la playa?", None, "es"),
        ("O que fizemos no fim de semana na praia?", None, "pt"),
        ("Когда мы ездили на море?", None, "ru"),
        ("Caroline support group", "es", "es"),  # a declared Latin language wins over the guess
    ],
)
def test_query_language(query: str, declared: str | None, expected: str) -> None:
    assert query_language(query, declared) == expected


def test_cosine_slots_keep_the_cosine_paths_best_rows() -> None:
    fused = [(row, 10.0 - row) for row in range(12)]  # rows 0..11, best first
    config = replace(DEFAULT, total=4, cosine_slots=2)
    cosine = np.linspace(1.0, 0.0, 12)
    kept = [row for row, _ in with_slots(fused, [9, 1], cosine, config)]
    assert kept == [0, 1, 2, 9]  # row 9 takes the lowest unprotected place (3); row 1 was in already
    assert [row for row, _ in with_slots(fused, [9, 1], cosine, replace(config, cosine_slots=0))] == [
        0,
        1,
        2,
        3,
    ]


def test_the_benchmark_variants_are_named_configurations() -> None:
    for name in (
        "nekomem-muse",
        "nekomem-w1",
        "nekomem-mean",
        "nekomem-no-when",
        "nekomem-slots3",
        "nekomem-floor-list",
    ):
        assert CONFIGS[name].name == name
    assert CONFIGS["nekomem"] is DEFAULT and DEFAULT.when_bonus > 0
