"""The recall block in each locale (reference §4.6): header, tier labels (raw turns included), the
age of each line, and the "nothing found" texts; the memory text is never translated."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from recall.rendering import render_recall_markdown

NOW = timezone.now()
ROWS = [
    {"text": "阿凛喜欢冰美式", "tier": "fact", "entity": "master", "created_at": NOW - timedelta(days=3)},
    {
        "text": "I'll be in Osaka next week",
        "tier": "raw_turn",
        "entity": "",
        "created_at": NOW - timedelta(days=1),
    },
]


@pytest.mark.parametrize(
    ("language", "header", "fact_line", "raw_line", "none"),
    [
        (
            "zh",
            "以下是与本次查询相关的记忆：",
            "1. [事实/关于主人] 阿凛喜欢冰美式",
            "[原话]",
            "没有找到相关的记忆。",
        ),
        (
            "zh-TW",
            "以下是與本次查詢相關的記憶：",
            "1. [事實/關於主人] 阿凛喜欢冰美式",
            "[原話]",
            "沒有找到相關的記憶。",
        ),
        (
            "en",
            "Memories related to this query:",
            "1. [fact/about master] 阿凛喜欢冰美式",
            "[said]",
            "No relevant memories found.",
        ),
        (
            "ja",
            "この問い合わせに関連する記憶：",
            "1. [事実/ご主人について] 阿凛喜欢冰美式",
            "[発言]",
            "関連する記憶は見つかりませんでした。",
        ),
        (
            "ko",
            "이 질문과 관련된 기억:",
            "1. [사실/주인에 대해] 阿凛喜欢冰美式",
            "[발언]",
            "관련된 기억을 찾지 못했습니다.",
        ),
        (
            "ru",
            "Воспоминания, связанные с этим запросом:",
            "1. [факт/о хозяине] 阿凛喜欢冰美式",
            "[реплика]",
            "Подходящих воспоминаний не найдено.",
        ),
        (
            "es",
            "Recuerdos relacionados con esta consulta:",
            "1. [hecho/sobre el amo] 阿凛喜欢冰美式",
            "[dicho]",
            "No se encontraron recuerdos relacionados.",
        ),
        (
            "pt",
            "Memórias relacionadas a esta consulta:",
            "1. [fato/sobre o mestre] 阿凛喜欢冰美式",
            "[fala]",
            "Nenhuma memória relacionada foi encontrada.",
        ),
    ],
)
def test_the_recall_block_reads_in_the_locale(language, header, fact_line, raw_line, none):
    lines = render_recall_markdown(ROWS, language=language, now=NOW).splitlines()
    assert lines[0] == header
    assert lines[1].startswith(fact_line)
    assert lines[2].startswith(f"2. {raw_line} I'll be in Osaka next week")
    assert render_recall_markdown([], language=language, failed=True) == none


@pytest.mark.parametrize(
    ("language", "days", "age"),
    [
        ("ru", 1, "1 день назад"),
        ("ru", 3, "3 дня назад"),
        ("ru", 5, "5 дней назад"),
        ("en", 1, "1 day ago"),
        ("ja", 3, "3日前"),
        ("ko", 3, "3일 전"),
        ("es", 3, "hace 3 días"),
        ("pt", 3, "há 3 dias"),
    ],
)
def test_each_line_gives_its_age_in_the_locale(language, days, age):
    row = {"text": "x", "tier": "fact", "entity": "master", "created_at": NOW - timedelta(days=days)}
    line = render_recall_markdown([row], language=language, now=NOW).splitlines()[1]
    assert line.endswith(f", {age})")
