# ruff: noqa: E501  the wire sentences stay whole so they can be compared with the reference by eye
"""Every layer's locale tables: all eight locales, the same keys, the same placeholders, and the wire
sentences of reference §5.1 word for word."""

from __future__ import annotations

import pytest

from nekomem.language.codes import SUPPORTED_LANGUAGES
from nekomem.language.plurals import plural
from nekomem.language.tables import load_locale_tables, placeholders, table_problems

# (package, attribute): every per-locale table of the project.
TABLES = [
    ("recall.locales", "TEXT"),
    ("recall.locales", "QUESTIONS"),
    ("persona.locales", "TEXT"),
    ("persona.locales", "PROMPTS"),
    ("recent.locales", "TEXT"),
    ("recent.locales", "PROMPTS"),
    ("facts.locales", "PROMPTS"),
    ("reflections.locales", "PROMPTS"),
    ("mcp_server.locales", "TEXT"),
    ("history.locales", "TEXT"),
]


@pytest.mark.parametrize(("package", "attribute"), TABLES)
def test_every_locale_has_every_key_with_the_same_placeholders(package, attribute):
    tables = load_locale_tables(package, attribute)
    assert set(tables) == set(SUPPORTED_LANGUAGES)
    assert table_problems(tables) == []


def test_a_missing_key_or_placeholder_is_reported():
    tables = {code: {"a": "{name} x", "b": "y"} for code in SUPPORTED_LANGUAGES}
    tables["ja"] = {"a": "{nome} x"}
    assert table_problems(tables) == ["ja: missing b", "ja: a has ['nome'], en has ['name']"]


# Reference §5.1's table, word for word: the chat server's splitter holds these.
WIRE = {
    "zh": (
        "\n\n======以下是{name}的内心活动======\n",
        "现在时间是{time}。开始聊天前，{name}又在脑海内整理了近期发生的事情。",
    ),
    "zh-TW": (
        "\n\n======以下是{name}的內心活動======\n",
        "現在時間是{time}。開始聊天前，{name}又在腦海裡整理了近期發生的事情。",
    ),
    "en": (
        "\n\n======{name}'s Inner Thoughts======\n",
        "The current time is {time}. Before the conversation begins, {name} is mentally reviewing recent events.",
    ),
    "ja": (
        "\n\n======{name}の心の声======\n",
        "現在の時刻は{time}です。会話を始める前に、{name}は最近の出来事を頭の中で整理しています。",
    ),
    "ko": (
        "\n\n======{name}의 내면 활동======\n",
        "현재 시간은 {time}입니다. 대화를 시작하기 전에 {name}은 최근 있었던 일들을 마음속으로 정리하고 있습니다.",
    ),
    "ru": (
        "\n\n======Внутренние мысли {name}======\n",
        "Текущее время: {time}. Перед началом разговора {name} мысленно перебирает последние события.",
    ),
    "es": (
        "\n\n======Pensamientos internos de {name}======\n",
        "La hora actual es {time}. Antes de iniciar la conversación, {name} repasa mentalmente los "
        "acontecimientos recientes.",
    ),
    "pt": (
        "\n\n======Pensamentos internos de {name}======\n",
        "A hora atual é {time}. Antes de iniciar a conversa, {name} revisa mentalmente os acontecimentos recentes.",
    ),
}


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_the_inner_thoughts_header_and_sentence_are_the_originals(language):
    text = load_locale_tables("recall.locales")[language]
    assert (text["inner_thoughts_header"], text["inner_thoughts"]) == WIRE[language]
    # /get_recent_history opens with the sentence's clause after the time (en has its own wording).
    intro = load_locale_tables("recent.locales")[language]["history_intro"]
    if language != "en":
        assert WIRE[language][1].endswith(intro.split("{name}")[-1])
    assert placeholders(intro) == {"name"}


@pytest.mark.parametrize(
    ("language", "n", "expected"),
    [
        ("ru", 1, "1 день"),
        ("ru", 3, "3 дня"),
        ("ru", 5, "5 дней"),
        ("ru", 11, "11 дней"),
        ("ru", 22, "22 дня"),
        ("en", 1, "1 day"),
        ("en", 3, "3 days"),
        ("es", 3, "3 días"),
        ("pt", 3, "3 dias"),
        ("ja", 3, "3日"),
        ("ko", 3, "3일"),
        ("zh", 3, "3天"),
        ("zh-TW", 3, "3天"),
    ],
)
def test_day_counts_read_naturally(language, n, expected):
    days = load_locale_tables("recall.locales")[language]["elapsed"]["days"]
    assert plural(language, days, n) == expected
