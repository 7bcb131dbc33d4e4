"""The negative-keyword hook's words in every locale (reference §3.2, §3.4)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from reflections.keywords import NEGATIVE_KEYWORDS, has_negative_keyword
from reflections.models import Reflection
from reflections.services import reflections_keyword_hook
from tests.reflections.factories import make_reflection
from tests.support.llm_server import json_content

PUSHBACK = {
    "zh": ["我不是那种人，你搞错了", "别提了，我不想聊这个"],
    "zh-TW": ["你搞錯了，我才不喜歡", "別再說了"],
    "en": ["That's not true, I never said that", "Please stop talking about my ex"],
    "ja": ["その話はやめて", "違うよ、もう猫は好きじゃない"],
    "ko": ["그 얘기 그만해", "아니야, 나 그런 말 안 했어"],
    "ru": ["хватит об этом", "Это не так, я больше не курю"],
    "es": ["deja de hablar de eso", "No es verdad, ya no trabajo allí"],
    "pt": ["pare de falar disso", "Não é verdade, eu não gosto de café"],
}
NEUTRAL = {
    "zh": "今天天气很好，我们去公园吧",
    "zh-TW": "今天天氣很好，我們去公園吧",
    "en": "today was lovely",
    "ja": "今日は天気がいいね、公園に行こう",
    "ko": "오늘 날씨 좋다, 공원 가자",
    "ru": "Сегодня хорошая погода, пойдём в парк",
    "es": "Hoy hace buen tiempo, vamos al parque",
    "pt": "Hoje o tempo está bom, vamos ao parque",
}


def test_every_locale_has_words() -> None:
    assert set(NEGATIVE_KEYWORDS) == {"zh", "zh-TW", "en", "ja", "ko", "ru", "es", "pt"}
    assert all(NEGATIVE_KEYWORDS[locale] for locale in NEGATIVE_KEYWORDS)


@pytest.mark.parametrize(
    "message", [pytest.param(m, id=f"{locale}:{m}") for locale, ms in PUSHBACK.items() for m in ms]
)
def test_pushback_is_heard_in_every_locale(message: str) -> None:
    assert has_negative_keyword([message])


@pytest.mark.parametrize("message", [pytest.param(m, id=locale) for locale, m in NEUTRAL.items()])
def test_an_ordinary_message_is_not_pushback(message: str) -> None:
    assert not has_negative_keyword([message])


def test_words_typed_without_accents_or_with_a_curly_apostrophe_match() -> None:
    assert has_negative_keyword(["nao e verdade"])
    assert has_negative_keyword(["I don\u2019t like that any more"])


@pytest.mark.django_db
def test_a_korean_stop_talking_about_it_disputes_the_target(character, llm_server) -> None:
    target = make_reflection(
        character=character,
        status=Reflection.Status.CONFIRMED,
        reinforcement=1.0,
        rein_last_signal_at=timezone.now(),
    )
    llm_server.script(json_content({"targets": [{"target_id": target.reflection_id}]}))
    payload = {"messages": [{"type": "human", "data": {"content": "그 얘기 그만해"}}], "language": "ko"}
    assert reflections_keyword_hook(character_id=character.pk, payload=payload) == 1
    assert "그 얘기 그만해" in llm_server.bodies[0]["messages"][0]["content"]
    target.refresh_from_db()
    assert target.disputation == 1.0
