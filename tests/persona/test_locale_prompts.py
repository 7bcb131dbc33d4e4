"""Promotion merge and persona corrections, per locale, through the loopback LLM: the request carries
the locale's prompt, and the merged text the model writes in that language is stored as it came."""

from __future__ import annotations

import pytest

from nekomem.language.codes import SUPPORTED_LANGUAGES
from persona.models import PersonaEntry
from persona.prompts import PROMPTS
from persona.services import persona_corrections_resolve, persona_promote_tick
from tests.persona.factories import make_entry
from tests.persona.test_corrections import _queue
from tests.persona.test_promotion import _ready
from tests.support.llm_server import json_content

pytestmark = pytest.mark.django_db

# Per locale: an entry, an impression that says the same, and the merged wording, in that language.
SAMPLES = {
    "zh": ("阿凛喜欢爵士乐", "阿凛每晚都听爵士乐", "阿凛热爱爵士乐，每晚都听"),
    "zh-TW": ("阿凛喜歡爵士樂", "阿凛每晚都聽爵士樂", "阿凛熱愛爵士樂，每晚都聽"),
    "en": ("阿凛 likes jazz", "阿凛 listens to jazz every night", "阿凛 loves jazz and plays it every night"),
    "ja": ("阿凛はジャズが好き", "阿凛は毎晩ジャズを聴く", "阿凛はジャズが大好きで毎晩聴いている"),
    "ko": (
        "阿凛은 재즈를 좋아한다",
        "阿凛은 매일 밤 재즈를 듣는다",
        "阿凛은 재즈를 아주 좋아해서 매일 밤 듣는다",
    ),
    "ru": (
        "阿凛 любит джаз",
        "阿凛 каждый вечер слушает джаз",
        "阿凛 обожает джаз и слушает его каждый вечер",
    ),
    "es": (
        "A 阿凛 le gusta el jazz",
        "阿凛 escucha jazz cada noche",
        "A 阿凛 le encanta el jazz y lo escucha cada noche",
    ),
    "pt": ("阿凛 gosta de jazz", "阿凛 ouve jazz toda noite", "阿凛 adora jazz e ouve toda noite"),
}


def opening(template: str, **values: str) -> str:
    return template.split("\n", 1)[0].format(**values)


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_promotion_merge_asks_in_the_locale_and_keeps_the_merged_text(character, llm_server, language):
    character.language = language
    character.save()
    old, impression, merged = SAMPLES[language]
    target = make_entry(character=character, text=old)
    reflection = _ready(character, impression)
    llm_server.script(
        json_content(
            {"action": "merge_into", "target_id": f"persona.master.{target.entry_id}", "merged_text": merged}
        )
    )
    assert persona_promote_tick(character_id=character.pk).outcomes[reflection.reflection_id] == "merged"
    prompt = llm_server.requests[0].json["messages"][0]["content"]
    assert prompt.startswith(opening(PROMPTS[language]["merge"], name="小天", master="阿凛"))
    target.refresh_from_db()
    assert target.text == merged


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_corrections_ask_in_the_locale_and_keep_the_text_as_written(character, llm_server, language):
    character.language = language
    character.save()
    old, new, merged = SAMPLES[language]
    make_entry(character=character, text=old)
    _queue(character, old, new)
    llm_server.script(json_content([{"index": 0, "action": "merge", "text": merged}]))
    assert persona_corrections_resolve(character_id=character.pk).resolved == 1
    prompt = llm_server.requests[0].json["messages"][0]["content"]
    assert prompt.startswith(opening(PROMPTS[language]["corrections"], name="小天"))
    line = PROMPTS[language]["correction_line"].format(
        index=0, old_text=old, old_trust="user", new_text=new, new_trust="user"
    )
    assert line in prompt
    assert PersonaEntry.objects.filter(character=character, text=merged).exists()
