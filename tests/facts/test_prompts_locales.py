"""The facts layer's other prompts per locale: the AI-disclosure pass and dedup arbitration."""

from __future__ import annotations

import pytest

from facts.prompts import PROMPTS, arbitration_messages, disclosure_messages
from nekomem.language.codes import SUPPORTED_LANGUAGES
from nekomem.language.resolution import default_master_name


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_disclosure_and_arbitration_ask_in_the_locale(language):
    table = PROMPTS[language]
    master = default_master_name(language)
    disclosure = disclosure_messages(
        name="Mio", master="", lines=[("user", "hi")], known=["Mio likes naps"], language=language
    )
    assert disclosure[0]["content"] == table["disclosure"].format(
        name="Mio", master=master, known="- Mio likes naps"
    )
    assert disclosure[1]["content"] == "======以下为对话======\nuser | hi\n======以上为对话======"
    arbitration = arbitration_messages(name="Mio", pairs=[(0, "新しい", "古い")], language=language)
    pair = table["pair"].format(index=0, new="新しい", old="古い")
    assert arbitration[0]["content"] == table["arbitrate"].format(name="Mio", pairs=pair)


def test_an_unknown_language_is_asked_in_english():
    (message,) = arbitration_messages(name="Mio", pairs=[(0, "a", "b")], language="fr")
    assert message["content"].startswith(PROMPTS["en"]["arbitrate"].split("\n", 1)[0].format(name="Mio"))
