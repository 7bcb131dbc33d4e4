"""Every locale, through the loopback LLM: extraction, synthesis and the feedback check ask in the
user's language (the locale's own prompt), and what the model answers in that language is stored as it
came (reference §7: facts and reflections keep the language they were said in)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from facts.models import Fact
from facts.prompts import PROMPTS as FACT_PROMPTS
from facts.tasks import facts_extraction_loop
from nekomem.characters.models import Character
from nekomem.language.codes import SUPPORTED_LANGUAGES
from nekomem.language.resolution import default_master_name
from reflections.models import Reflection
from reflections.prompts import PROMPTS as REFLECTION_PROMPTS
from reflections.prompts import keyword_messages, rebuttal_messages, signal_messages
from tests.facts.test_extraction import fact_reply
from tests.reflections.test_synthesis import synthesis_reply
from tests.support.llm_server import json_content

pytestmark = pytest.mark.django_db

# Per locale: what the user says (a turn pair), five facts and an impression in that language, and the
# user's confirming answer (synthesis needs five facts).
CASES = {
    "zh": (
        ("我周末喜欢画画", "真好呀"),
        ["主人周末喜欢画画", "主人喜欢弹钢琴", "主人喜欢品茶", "主人喜欢读书", "主人喜欢安静的下午"],
        "主人喜欢安静的文艺爱好",
        "对呀",
    ),
    "zh-TW": (
        ("我週末喜歡畫畫", "真好呀"),
        ["主人週末喜歡畫畫", "主人喜歡彈鋼琴", "主人喜歡品茶", "主人喜歡讀書", "主人喜歡安靜的午後"],
        "主人喜歡安靜的文藝嗜好",
        "對呀",
    ),
    "en": (
        ("I paint on weekends", "Lovely!"),
        [
            "Master paints on weekends",
            "Master plays the piano",
            "Master enjoys tea tasting",
            "Master reads a lot",
            "Master loves quiet afternoons",
        ],
        "Master loves quiet, artistic pastimes",
        "Yes, exactly",
    ),
    "ja": (
        ("週末は絵を描くのが好きなんだ", "素敵だね"),
        [
            "ご主人様は週末に絵を描く",
            "ご主人様はピアノを弾く",
            "ご主人様はお茶が好き",
            "ご主人様は読書家だ",
            "ご主人様は静かな午後が好き",
        ],
        "ご主人様は静かで芸術的な趣味が好き",
        "うん、そうだよ",
    ),
    "ko": (
        ("주말에는 그림 그리는 걸 좋아해", "멋지다"),
        [
            "주인님은 주말에 그림을 그린다",
            "주인님은 피아노를 친다",
            "주인님은 차를 즐긴다",
            "주인님은 책을 많이 읽는다",
            "주인님은 조용한 오후를 좋아한다",
        ],
        "주인님은 조용하고 예술적인 취미를 좋아한다",
        "응, 맞아",
    ),
    "ru": (
        ("По выходным я рисую", "Здорово!"),
        [
            "Хозяин рисует по выходным",
            "Хозяин играет на пианино",
            "Хозяин любит чай",
            "Хозяин много читает",
            "Хозяин любит тихие вечера",
        ],
        "Хозяин любит тихие творческие увлечения",
        "Да, именно так",
    ),
    "es": (
        ("Los fines de semana pinto", "¡Qué bien!"),
        [
            "El amo pinta los fines de semana",
            "El amo toca el piano",
            "Al amo le encanta el té",
            "El amo lee mucho",
            "Al amo le gustan las tardes tranquilas",
        ],
        "Al amo le gustan las aficiones tranquilas y artísticas",
        "Sí, exacto",
    ),
    "pt": (
        ("Nos fins de semana eu pinto", "Que legal!"),
        [
            "O mestre pinta nos fins de semana",
            "O mestre toca piano",
            "O mestre adora chá",
            "O mestre lê muito",
            "O mestre gosta de tardes tranquilas",
        ],
        "O mestre gosta de passatempos calmos e artísticos",
        "Sim, exatamente",
    ),
}


def first_line(template: str, **values: str) -> str:
    return template.split("\n", 1)[0].format(**values)


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_prompts_follow_the_users_language_and_answers_are_stored_as_they_came(
    language, post_history, client, llm_server, django_capture_on_commit_callbacks
):
    (said, reply), facts, impression, answer = CASES[language]
    master = default_master_name(language)
    post_history("cache", "Mio", ("human", said), ("ai", reply), language=language)
    Character.objects.filter(name="Mio").update(last_activity_at=timezone.now() - timedelta(seconds=30))

    llm_server.script(fact_reply(*facts, importance=8))
    facts_extraction_loop()
    extraction = llm_server.bodies[0]["messages"]
    assert extraction[0]["content"] == FACT_PROMPTS[language]["extract"].format(name="Mio", master=master)
    assert said in extraction[1]["content"]
    assert extraction[1]["content"].startswith("======以下为对话======")  # the watermark stays zh
    assert sorted(Fact.objects.filter(character__name="Mio").values_list("text", flat=True)) == sorted(facts)

    llm_server.script(synthesis_reply(text=impression))
    reflection_id = client.post("/reflect/Mio", content_type="application/json").json()["reflection"]["id"]
    synthesis = llm_server.bodies[1]["messages"][0]["content"]
    assert synthesis.startswith(
        first_line(REFLECTION_PROMPTS[language]["synthesis"], name="Mio", master=master)
    )
    assert Reflection.objects.get(reflection_id=reflection_id).text == impression

    client.post(
        "/record_surfaced/Mio",
        data=json.dumps({"reflection_ids": [reflection_id]}),
        content_type="application/json",
    )
    llm_server.script(json_content([{"reflection_id": reflection_id, "feedback": "confirmed"}]))
    with django_capture_on_commit_callbacks(execute=True):
        post_history("cache", "Mio", ("ai", impression), ("human", answer), language=language)
    feedback = llm_server.bodies[-1]["messages"][0]["content"]
    assert feedback.startswith(
        first_line(REFLECTION_PROMPTS[language]["feedback"], name="Mio", master=master)
    )
    assert Reflection.objects.get(reflection_id=reflection_id).status == Reflection.Status.CONFIRMED


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_stage2_keyword_and_rebuttal_prompts_are_the_locales(language):
    master = default_master_name(language)
    table = REFLECTION_PROMPTS[language]
    built = {
        "signals": signal_messages(
            name="Mio", master="", observations=["[r1] x"], facts=["[f1] y"], language=language
        ),
        "keyword": keyword_messages(
            name="Mio", master="", messages=["no"], observations=["[r1] x"], language=language
        ),
        "rebuttal": rebuttal_messages(
            name="Mio", master="", observations=["[r1] x"], messages=["no"], language=language
        ),
    }
    for key, messages in built.items():
        assert messages[0]["content"].startswith(first_line(table[key], name="Mio", master=master)), key
        assert "[r1] x" in messages[0]["content"]
