"""Normalisation of text before it is tokenised or compared: Traditional→Simplified (``zhconv``, see
``nekomem.language.tokens``), NFKC, case and diacritics folding. Pure functions on plain strings."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

# The CJK blocks the tokenizers cut into n-grams, and the Han ones among them.
CJK_CLASS = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
HAN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@lru_cache(maxsize=1)
def _zhconv() -> Any:
    import zhconv  # lazy: ~0.1 s dictionary load, not needed for ASCII-only text

    return zhconv


def to_simplified(text: str) -> str:
    """Fold Traditional Chinese to Simplified; text without Han characters is returned untouched."""
    if not HAN_RE.search(text):
        return text
    return str(_zhconv().convert(text, "zh-hans"))


def to_traditional(text: str) -> str:
    """Simplified Chinese written in Traditional characters (a search for stored text in either script)."""
    if not HAN_RE.search(text):
        return text
    return str(_zhconv().convert(text, "zh-hant"))


# Non-ASCII characters below the CJK blocks: the only ones folding can change (found by the regex engine,
# so a Chinese text costs no Python loop over its characters).
_FOLDABLE_RE = re.compile("[\u0080-\u2e7f]")


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    decomposed = unicodedata.normalize("NFD", ch)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def fold_diacritics(text: str) -> str:
    """Remove combining marks from letters below the CJK blocks (é→e, ß stays); kana voicing marks and
    Hangul syllables are left alone because decomposing them would change the word."""
    if text.isascii():
        return text
    return _FOLDABLE_RE.sub(lambda match: _fold_char(match.group()), text)


def normalize_for_search(text: str) -> str:
    """NFKC (full-width → ASCII), Traditional→Simplified, lower-case, diacritics folded."""
    text = unicodedata.normalize("NFKC", text)
    return fold_diacritics(to_simplified(text).lower())


# The recall tokenizer folds every letter but Cyrillic before it stems: the Russian stemmer reads й and ё
# (новый / новой → нов, folded first they stay новы / ново), and the stem is folded after it.
_FOLDABLE_BUT_CYRILLIC_RE = re.compile("[\u0080-\u03ff\u0500-\u2e7f]")


def normalize_for_recall(text: str) -> str:
    text = to_simplified(unicodedata.normalize("NFKC", text)).lower()
    if text.isascii():
        return text
    return _FOLDABLE_BUT_CYRILLIC_RE.sub(lambda match: _fold_char(match.group()), text)


def normalized_identity(text: str) -> str:
    """Lower-case with whitespace collapsed; order, punctuation and names kept (§3.3.4 exact duplicate)."""
    return " ".join(text.lower().split())
