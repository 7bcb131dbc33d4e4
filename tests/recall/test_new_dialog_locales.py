"""Golden tests per locale: /new_dialog cut by the chat server's pattern for that locale, its headers,
age labels, gap hints and holiday line, and /get_recent_history's opening (reference §5.1)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.language.codes import SUPPORTED_LANGUAGES
from recall.selectors import working_context_render
from tests.characters.factories import CharacterFactory
from tests.language.test_locale_tables import WIRE
from tests.persona.factories import make_entry
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db


def chat_server_split(text: str, language: str) -> tuple[str, str]:
    """The chat server's cut: the template with {time} and {name} as lazy wildcards, cut at the end of
    the first match; no match → all history, no inner thoughts."""
    pattern = re.escape(WIRE[language][1])
    for field in ("time", "name"):
        pattern = pattern.replace(re.escape("{" + field + "}"), "(.*?)")
    match = re.search(pattern, text)
    if match is None:
        return "", text
    return text[: match.end()], text[match.end() :]


@dataclass(frozen=True)
class Case:
    name: str
    master: str
    entry: str
    turn: tuple[str, str]
    master_header: str
    pending_header: str
    age: str  # the older-memories label of a reflection 65 days old
    gap: str  # a piece of the gap notice that only this locale writes
    holiday: tuple[datetime, str]  # a day after the conversation, and its line
    history_intro: str


def at(year: int, month: int, day: int) -> datetime:
    return timezone.make_aware(datetime(year, month, day, 20, 30))


CASES = {
    "zh": Case(
        "小天",
        "阿凛",
        "阿凛喜欢喝冰美式",
        ("今天好累", "辛苦啦～"),
        "### 关于阿凛",
        "### 小天最近的印象（还不太确定）",
        "2个月前",
        "距离上次与阿凛聊天已经过去了",
        (at(2030, 2, 3), "今天是春节。"),
        "开始聊天前，小天又在脑海内整理了近期发生的事情。",
    ),
    "zh-TW": Case(
        "小天",
        "阿凜",
        "阿凜喜歡喝冰美式",
        ("今天好累", "辛苦啦～"),
        "### 關於阿凜",
        "### 小天最近的印象（還不太確定）",
        "2個月前",
        "距離上次與阿凜聊天已經過去了",
        (at(2030, 9, 12), "今天是中秋節。"),
        "開始聊天前，小天又在腦海裡整理了近期發生的事情。",
    ),
    "en": Case(
        "Tian",
        "Rin",
        "Rin likes iced americano",
        ("Long day today", "Rest well!"),
        "### About Rin",
        "### Tian's recent impressions (not yet sure)",
        "2 months ago",
        "since the last chat with Rin",
        (at(2030, 12, 25), "Today is Christmas Day."),
        "Before the chat begins, Tian mentally reviews recent events.",
    ),
    "ja": Case(
        "ミオ",
        "リン",
        "リンはアイスコーヒーが好き",
        ("今日は疲れたよ", "お疲れさま！"),
        "### リンについて",
        "### ミオの最近の印象（まだはっきりしない）",
        "2か月前",
        "リンと最後に話してから",
        (at(2030, 5, 5), "今日はこどもの日です。"),
        "会話を始める前に、ミオは最近の出来事を頭の中で整理しています。",
    ),
    "ko": Case(
        "미오",
        "린",
        "린은 아이스 아메리카노를 좋아한다",
        ("오늘 너무 피곤해", "수고했어!"),
        "### 린에 대해",
        "### 미오의 최근 인상 (아직 확실하지 않음)",
        "2개월 전",
        "마지막으로 대화한 지",
        (at(2030, 9, 12), "오늘은 추석입니다."),
        "대화를 시작하기 전에 미오은 최근 있었던 일들을 마음속으로 정리하고 있습니다.",
    ),
    "ru": Case(
        "Мио",
        "Рин",
        "Рин любит холодный американо",
        ("Сегодня так устал", "Отдыхай!"),
        "### О Рин",
        "### Недавние впечатления Мио (пока не точно)",
        "2 месяца назад",
        "С последнего разговора с Рин прошло",
        (at(2030, 5, 9), "Сегодня День Победы."),
        "Перед началом разговора Мио мысленно перебирает последние события.",
    ),
    "es": Case(
        "Mio",
        "Rin",
        "A Rin le gusta el americano con hielo",
        ("Qué día tan largo", "¡Descansa!"),
        "### Sobre Rin",
        "### Impresiones recientes de Mio (aún no seguras)",
        "hace 2 meses",
        "desde la última conversación con Rin",
        (at(2030, 12, 25), "Hoy es Navidad."),
        "Antes de iniciar la conversación, Mio repasa mentalmente los acontecimientos recientes.",
    ),
    "pt": Case(
        "Mio",
        "Rin",
        "Rin gosta de americano gelado",
        ("Que dia longo", "Descanse!"),
        "### Sobre Rin",
        "### Impressões recentes de Mio (ainda incertas)",
        "há 2 meses",
        "desde a última conversa com Rin",
        (at(2030, 12, 25), "Hoje é o Natal."),
        "Antes de iniciar a conversa, Mio revisa mentalmente os acontecimentos recentes.",
    ),
}


def test_every_locale_has_a_golden_case():
    assert set(CASES) == set(SUPPORTED_LANGUAGES)


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_new_dialog_in_each_locale_splits_and_reads_in_that_locale(client, post_history, language):
    case = CASES[language]
    character = CharacterFactory(name=case.name, master_name=case.master, language=language)
    make_entry(character=character, section="master", text=case.entry)
    make_reflection(character=character, text=f"{case.entry} (pending)", reinforcement=0.3)
    make_reflection(
        character=character,
        text=f"{case.entry} (past)",
        status="confirmed",
        temporal_scope="episode",
        created_at=timezone.now() - timedelta(days=65),
    )
    post_history("cache", case.name, ("human", case.turn[0]), ("ai", case.turn[1]), language=language)

    text = client.get(f"/new_dialog/{case.name}", {"language": language}).content.decode()
    inner, history = chat_server_split(text, language)
    assert inner and case.entry in inner
    assert WIRE[language][0].format(name=case.name) in inner
    assert case.master_header in inner.splitlines() and case.pending_header in inner.splitlines()
    assert f"- [{case.age}] {case.entry} (past)" in inner
    assert history.strip().splitlines() == [
        f"{case.master} | {case.turn[0]}",
        f"{case.name} | {case.turn[1]}",
    ]

    # Days later, on a holiday of the locale: the gap hints and the holiday line close the context.
    day, holiday = case.holiday
    later = working_context_render(
        character=Character.objects.get(name=case.name), language=language, now=day
    )
    tail = later.rstrip("\n").splitlines()
    assert tail[-1] == holiday
    assert case.gap in tail[-2] and day.strftime("%Y-%m-%d %H:%M") in tail[-2]
    assert case.name in tail[-2].split(case.gap)[-1]  # the long-gap hint names the companion

    opening = client.get(f"/get_recent_history/{case.name}", {"language": language}).content.decode()
    assert opening.splitlines() == [case.history_intro, *history.strip().splitlines()]


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("zh", "开始聊天前，没有历史记录。"),
        ("zh-TW", "開始聊天前，沒有歷史記錄。"),
        ("en", "Before the chat begins, there is no history."),
        ("ja", "会話を始める前に、履歴はありません。"),
        ("ru", "Перед началом разговора истории нет."),
    ],
)
def test_recent_history_without_history_says_so_in_the_locale(client, language, expected):
    CharacterFactory(name="Mio", language=language)
    assert client.get("/get_recent_history/Mio", {"language": language}).content.decode() == expected + "\n"


def test_an_unsupported_language_falls_through_to_the_stored_one_and_a_region_keeps_its_language(client):
    # Only a supported code is an explicit choice (reference §1.1, §1.7): "fr" neither renders nor
    # replaces the character's stored locale.
    CharacterFactory(name="Mio", language="zh")
    assert "以下是Mio的内心活动" in client.get("/new_dialog/Mio", {"language": "fr"}).content.decode()
    assert "Mioの心の声" in client.get("/new_dialog/Mio", {"language": "ja-JP"}).content.decode()
