"""Tokenizers of the recall and dedup paths (normalisation: ``normalize``; counting: ``counting``).

Pure functions on plain strings; no ORM, no Django.

Tokenizers
----------
- ``recall_tokens``   the original hybrid-recall BM25 tokenizer (spec §4.3), kept verbatim as a baseline:
                      no case folding, CJK 2/3-grams, other segments whole.
- ``keyword_set``     the persona keyword extractor (§3.6): the same rules, as a set.
- ``search_tokens``   nekomem's improved recall tokenizer: NFKC, Traditional→Simplified, lower-case,
                      diacritics folded, CJK 2/3-grams (optional Han unigrams), Latin/CJK runs split apart,
                      English stop words dropped and Snowball stemming: Russian for Cyrillic words,
                      Spanish or Portuguese when the text reads so, else English (Porter2); see
                      ``nekomem.language.stemming``.
- ``fts_tokens``      the text near-duplicate tokenizer (§3.3.4): like ``search_tokens`` but with whole
                      Latin runs (no stemming, no stop words), scored with ``dice_overlap``.

Traditional→Simplified uses ``zhconv`` (``zh-hans``: a pure script fold, no regional vocabulary rewrite).
It was chosen over ``opencc-python-reimplemented`` because both gave identical output on our samples
(後來/頭髮/乾杯/一隻/鬱悶/皇后) while zhconv was ~4x faster per call (13 µs vs 56 µs on 40-char turns).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from functools import lru_cache

from nekomem.language import stemming
from nekomem.language.normalize import (
    CJK_CLASS,
    HAN_RE,
    normalize_for_recall,
    normalize_for_search,
    to_simplified,
)

# ---------------------------------------------------------------------------------------------------------
# Character classes
# ---------------------------------------------------------------------------------------------------------

# Han (basic block), kana, Hangul syllables: the ranges the original uses for "mostly CJK".
_ORIGINAL_CJK_RANGES = ((0x4E00, 0x9FFF), (0x3040, 0x30FF), (0xAC00, 0xD7AF))

# The original's separator class: whitespace, ASCII and CJK punctuation, brackets, dashes, ellipsis,
# middle dot, ideographic space.
_ORIGINAL_SPLIT_RE = re.compile(
    r"[\s\u3000"
    r"!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~"
    r"，。！？；：、“”‘’（）【】《》〈〉「」『』〔〕［］｛｝＜＞"
    r"—–‐‑‒―…⋯·・～〜"
    r"]+"
)

# For the nekomem tokenizers: CJK runs (with extension A and compatibility ideographs) vs other
# letter/digit runs. Everything else separates.
_RUN_RE = re.compile(rf"(?P<cjk>[{CJK_CLASS}]+)|(?P<word>[^\W_{CJK_CLASS}]+)")
_CJK_ANY_RE = re.compile(rf"[{CJK_CLASS}]")

# A small English stop-word list (function words only) for search_tokens; content words stay.
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(
    """
    a an the and or but if then else so than too very of at by for with about against between into
    through during before after above below to from up down in out on off over under again further
    once here there when where why how all any both each few more most other some such no nor not
    only own same just can will would should could shall may might must do does did doing done have
    has had having be is am are was were been being i me my mine myself we us our ours ourselves you
    your yours yourself yourselves he him his himself she her hers herself it its itself they them
    their theirs themselves what which who whom whose this that these those as until while because
    s t d ll m re ve don didn doesn isn wasn aren weren won wouldn shouldn couldn hasn haven hadn
    also oh ok okay yeah yes hey hi
    """.split()  # noqa: SIM905 - a word block is easier to review than 150 quoted strings
)


_ORIGINAL_CJK_RE = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _ORIGINAL_CJK_RANGES) + "]")


def _mostly_cjk(segment: str) -> bool:
    # "More than half" of the characters, as in the original. Counted by the regex engine: a Python loop
    # over every character was most of a 100k-row index build.
    if segment.isascii():
        return False
    return len(_ORIGINAL_CJK_RE.findall(segment)) * 2 > len(segment)


def _char_ngrams(run: str) -> list[str]:
    """All 2-grams, then all 3-grams (the original's order)."""
    return [run[i : i + 2] for i in range(len(run) - 1)] + [run[i : i + 3] for i in range(len(run) - 2)]


def _remove_names(text: str, stop_names: Iterable[str]) -> str:
    # Longest first so "小天天" is removed before "小天"; a space keeps the two sides from forming
    # n-grams that never occurred in the text.
    for name in sorted({n for n in stop_names if n}, key=len, reverse=True):
        text = text.replace(name, " ")
    return text


# ---------------------------------------------------------------------------------------------------------
# Original tokenizers (§4.3, §3.6)
# ---------------------------------------------------------------------------------------------------------


def recall_tokens(text: str, stop_names: Iterable[str] = ()) -> list[str]:
    """The original hybrid-recall BM25 tokenizer: a list with repeats, case kept."""
    tokens: list[str] = []
    for segment in _ORIGINAL_SPLIT_RE.split(_remove_names(text, stop_names)):
        if not segment:
            continue
        if _mostly_cjk(segment):
            tokens.extend(_char_ngrams(segment))
        elif len(segment) >= 2:
            tokens.append(segment)
    return tokens


def keyword_set(text: str, stop_names: Iterable[str] = ()) -> set[str]:
    """Persona keywords (§3.6 ``_extract_keywords``): the recall tokenizer's rules, as a set."""
    return set(recall_tokens(text, stop_names))


def keyword_overlap(a: Collection[str], b: Collection[str]) -> float:
    """|A∩B| / min(|A|, |B|); 0 when either side is empty. The persona contradiction test uses ≥ 0.4."""
    set_a, set_b = set(a), set(b)
    if not set_a or not set_b:
        return 0.0
    return len(set_a & set_b) / min(len(set_a), len(set_b))


# ---------------------------------------------------------------------------------------------------------
# nekomem tokenizers
# ---------------------------------------------------------------------------------------------------------


def tokenizers_warm_up() -> None:
    """Load what the tokenizers load lazily (the Traditional→Simplified dictionary, the stemmer), so a
    process's first Chinese or English text does not pay for it on a request (~150 ms)."""
    to_simplified("預熱")  # the Traditional→Simplified dictionary
    stem_word("warming")
    search_tokens("預熱 warming up 预热")


def stem_word(word: str) -> str:
    """Porter2 stem of one lower-case English word (other words come back as they are)."""
    if not word.isascii() or not word.isalpha():
        return word
    return stemming.stem(word, stemming.ENGLISH)


def _cjk_tokens(run: str, *, unigrams: bool) -> list[str]:
    # A lone CJK character between separators would otherwise vanish; keep it as itself.
    tokens = _char_ngrams(run) if len(run) > 1 else [run]
    if unigrams and len(run) > 1:
        tokens.extend(ch for ch in run if HAN_RE.match(ch))
    return tokens


def _normalized_runs(text: str, stop_names: Iterable[str]) -> Iterable[re.Match[str]]:
    names = [normalize_for_search(n) for n in stop_names if n]
    return _RUN_RE.finditer(_remove_names(normalize_for_search(text), names))


def search_tokens(text: str, stop_names: Iterable[str] = (), *, unigrams: bool = False) -> list[str]:
    """nekomem's recall tokenizer: a list with repeats.

    Mixed segments are split into runs ("iPhone15很好用" → "iphone15" + "很好用"); CJK runs give 2/3-grams
    (plus single Han characters when ``unigrams``); other runs are stop-worded (English) and stemmed in
    the language of their script and of the text (``nekomem.language.stemming``).
    """
    names = [normalize_for_recall(n) for n in stop_names if n]
    # findall gives (cjk, word) pairs in C: a Match object per run was a third of the call.
    runs: list[tuple[str, str]] = _RUN_RE.findall(_remove_names(normalize_for_recall(text), names))
    words = [word for _, word in runs if word]
    language = stemming.latin_language(words, raw_text=text) if words else stemming.ENGLISH
    terms = stemming.terms
    tokens: list[str] = []
    for cjk, word in runs:
        if cjk:
            tokens.extend(_cjk_tokens(cjk, unigrams=unigrams))
        elif word not in ENGLISH_STOP_WORDS and (len(word) >= 2 or word.isdigit()):
            tokens.extend(terms(word, language))
    return tokens


# One character that is a word by itself: a Han ideograph (猫, 狗, 书) or a Hangul syllable (개, 집).
# Kana are left out: a lone kana is a particle or part of a word, never what a person searches for.
_WORD_CHAR_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


@lru_cache(maxsize=16_384)
def _simplified_char(ch: str) -> str:
    return to_simplified(ch)


def word_chars(text: str, stop_names: Iterable[str] = ()) -> list[str]:
    """The single-character words a text may hold (Han ideographs, Hangul syllables), Traditional folded
    to Simplified, one token each (with repeats). The 2/3-grams of ``search_tokens`` never hold a lone
    character, so a one-character query ("猫") found nothing by its words until the text had a vector.
    Characters are folded one by one: a phrase conversion would read across the characters a text
    separates."""
    found = _WORD_CHAR_RE.findall(_remove_names(text, stop_names))
    return [_simplified_char(ch) for ch in found]


def is_word_char(token: str) -> bool:
    """The token is one character ``word_chars`` indexes."""
    return len(token) == 1 and _WORD_CHAR_RE.match(token) is not None


def fts_tokens(text: str, stop_names: Iterable[str] = ()) -> list[str]:
    """Near-duplicate tokens (§3.3.4): folded text, CJK 2/3-grams and whole Latin runs."""
    tokens: list[str] = []
    for match in _normalized_runs(text, stop_names):
        run = match.group()
        tokens.extend(_cjk_tokens(run, unigrams=False) if match.lastgroup == "cjk" else [run])
    return tokens


def dice_overlap(tokens_a: Iterable[str], tokens_b: Iterable[str]) -> float:
    """Dice coefficient of the two token sets: 2|A∩B| / (|A|+|B|); 0 when both are empty."""
    set_a, set_b = set(tokens_a), set(tokens_b)
    total = len(set_a) + len(set_b)
    return 2 * len(set_a & set_b) / total if total else 0.0
