"""Locale resolution and the language of the user's own words (reference §5.1, §7)."""

from __future__ import annotations

import pytest

from nekomem.language.resolution import default_master_name, language_of, resolve_language


@pytest.mark.parametrize(
    ("candidates", "expected"),
    [
        (("ja-JP", "zh"), "ja"),
        ((None, "zh-Hant-HK"), "zh-TW"),
        (("", "ko"), "ko"),
        (("pt-BR",), "pt"),
        (("russian",), "ru"),
        (("es-419",), "es"),
        (("fr-FR", "ja"), "en"),  # the first set code wins; an unknown one reads as English
    ],
)
def test_the_first_set_candidate_wins_folded_to_one_of_the_eight(candidates, expected):
    assert resolve_language(*candidates) == expected


def test_no_candidate_falls_back_to_the_server_language(settings):
    settings.NEKOMEM_DEFAULT_LANGUAGE = "ko-KR"
    assert resolve_language(None, "") == "ko"
    settings.NEKOMEM_DEFAULT_LANGUAGE = "zh"
    assert resolve_language() == "zh"


@pytest.mark.parametrize(
    ("text", "fallback", "expected"),
    [
        ("我最近在准备考试，压力好大", "en", "zh"),
        ("我最近在準備考試，壓力好大", "zh", "zh-TW"),
        ("先週は京都に行ってきたよ", "zh", "ja"),
        ("東京に住んでいます", "en", "ja"),  # kanji with a little kana is Japanese
        ("지난주에 친구랑 영화 봤어", "en", "ko"),
        ("На прошлой неделе я ходил в кино", "en", "ru"),
        ("La semana pasada fui al cine", "es", "es"),
        ("Semana passada fui ao cinema", "pt-BR", "pt"),
        ("I went to the cinema last week", "ja", "en"),  # Latin text never reads as ja
        ("咖啡", "zh-TW", "zh-TW"),
        ("東京大学", "ja", "ja"),  # kanji alone keeps a Japanese setting
        ("東京大学", "zh", "zh"),  # the same in both scripts: the fallback decides
        ("", "ja", "ja"),
        ("123 !!", "ko", "ko"),
    ],
)
def test_the_script_of_the_users_words_decides(text, fallback, expected):
    assert language_of([text], fallback) == expected


def test_every_locale_has_its_own_word_for_the_master():
    names = {code: default_master_name(code) for code in ("zh", "en", "ja", "ko", "ru", "es", "pt")}
    assert len(set(names.values())) == len(names)
    assert default_master_name("zh-TW") == "主人"
