import pytest

from nekomem.language.codes import SUPPORTED_LANGUAGES, normalize_language, supported_language


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("zh", "zh"),
        ("zh-CN", "zh"),
        ("zh_Hans_CN", "zh"),
        ("zh-TW", "zh-TW"),
        ("zh-HK", "zh-TW"),
        ("zh-Hant", "zh-TW"),
        ("en-US", "en"),
        ("ja-JP", "ja"),
        ("ko", "ko"),
        ("ru-RU", "ru"),
        ("es-419", "es"),
        ("pt-BR", "pt"),
        ("schinese", "zh"),
        ("tchinese", "zh-TW"),
        ("koreana", "ko"),
        ("latam", "es"),
        ("brazilian", "pt"),
    ],
)
def test_supported_codes_normalise_to_one_of_the_eight(code, expected):
    assert supported_language(code) == expected
    assert expected in SUPPORTED_LANGUAGES


@pytest.mark.parametrize("code", ["", None, "fr", "de-DE", "klingon", "   "])
def test_unsupported_codes_are_not_supported_and_fold_into_english(code):
    assert supported_language(code) is None
    assert normalize_language(code) == "en"
    assert normalize_language(code, default="ja") == "ja"
