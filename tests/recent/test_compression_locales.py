"""Compression (and the review after it) asks in the user's language and keeps the memo as the model
wrote it (reference §3.1, §7)."""

from __future__ import annotations

import pytest

from nekomem.language.codes import SUPPORTED_LANGUAGES
from nekomem.language.resolution import default_master_name
from recent.models import RecentMessage
from recent.prompts import MEMO_PREFIX, PROMPTS
from tests.recent.scripting import summary, system_text, unchanged_review, user_text

pytestmark = pytest.mark.django_db

# A line the user might say, and a memo the model answers with, per locale.
SAMPLES = {
    "zh": ("今天去公园散步了", "主人今天去公园散步，心情不错。"),
    "zh-TW": ("今天去公園散步了", "主人今天去公園散步，心情不錯。"),
    "en": ("I walked in the park today", "Master walked in the park and felt good."),
    "ja": ("今日は公園を散歩したよ", "ご主人様は今日公園を散歩して、気分が良かった。"),
    "ko": ("오늘 공원에서 산책했어", "주인님은 오늘 공원에서 산책했고 기분이 좋았다."),
    "ru": ("Сегодня гулял в парке", "Хозяин сегодня гулял в парке, настроение хорошее."),
    "es": ("Hoy paseé por el parque", "El amo paseó hoy por el parque y se sintió bien."),
    "pt": ("Hoje passeei no parque", "O mestre passeou no parque hoje e se sentiu bem."),
}


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_the_memo_prompt_is_the_locales_and_the_memo_is_kept_as_written(
    client, llm_server, run_commits, language
):
    said, memo = SAMPLES[language]
    messages = [
        {"type": "human" if i % 2 == 0 else "ai", "data": {"content": f"{said} {i}"}} for i in range(21)
    ]
    llm_server.script(summary(memo), unchanged_review)

    run_commits(client, "process", "Mio", messages, language=language)

    body, review = llm_server.bodies
    master = default_master_name(language)
    assert system_text(body) == PROMPTS[language]["summarise"].format(name="Mio", master=master)
    # The dialogue delimiters stay Simplified Chinese in every language (a watermark, reference §7).
    assert user_text(body).startswith("======以下为对话======\n")
    assert f"{master} | {said} 0" in user_text(body)
    # The review that follows asks in the same language.
    assert system_text(review) == PROMPTS[language]["review"].format(name="Mio", master=master)
    first = RecentMessage.objects.filter(character__name="Mio").order_by("position").first()
    assert first is not None and first.data["content"] == MEMO_PREFIX[language] + memo
