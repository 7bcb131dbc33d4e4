"""Repetition insights (reference §1.7): phrases a character keeps repeating across its replies.

A local, read-only analysis with no LLM, for the main server's anti-repetition panel. Character
n-grams for zh, zh-TW, ja and ko (no word boundaries to rely on), word n-grams elsewhere. A phrase
counts once per reply that holds it; a candidate is a phrase at least two replies repeat, and a
phrase inside a longer candidate repeated as often is left out (the longer one says more).

Fast enough for the panel on 100 replies (``bench/repetition_insights.py``): base n-grams are counted
first, and a longer n-gram is only considered where both its first and its last base n-gram are
repeated somewhere (any repeated phrase is made of repeated pieces).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SCHEMA_VERSION = 1
ARTIFACT_TYPE = "repetition_insights"
MIN_MESSAGES, MAX_MESSAGES = 3, 100
CHARACTER_LANGUAGES = frozenset({"zh", "zh-CN", "zh-TW", "ja", "ko"})
INSIGHT_LANGUAGES = ("en", "es", "pt", "ru", "ja", "ko", "zh-CN", "zh-TW")

# Characters: 4..16 (a 3-character n-gram is mostly a common word); words: 3..12, within a sentence
# (a comma does not end a repeated phrase: "always here for you, no matter what").
_CHAR_SIZES = (4, 16)
_WORD_SIZES = (3, 12)
MIN_REPLIES = 2
MAX_CANDIDATES = 20
EXAMPLE_CHARS = 120

_SEGMENT_SPLIT = re.compile(r"[^\w\s]+|_+")
_WORD = re.compile(r"[\w']+")


Run = str | tuple[str, ...]  # a stretch of text between punctuation: characters or words


@dataclass(frozen=True)
class _Gram:
    phrase: str
    replies: int
    newest_reply: int  # index into the replies (0 = newest)


def _character_units(text: str, language: str) -> list[str]:
    """Runs of characters between punctuation; Korean keeps its spaces (words are short there),
    Chinese and Japanese drop them."""
    runs = []
    for segment in _SEGMENT_SPLIT.split(text.lower()):
        segment = " ".join(segment.split()) if language == "ko" else "".join(segment.split())
        if segment:
            runs.append(segment)  # a string: its slices hash faster than tuples of characters
    return runs


def _word_units(text: str) -> list[tuple[str, ...]]:
    runs = []
    for segment in re.split(r"[.!?;:\"()\[\]…。！？；：]+", text.lower()):
        words = _WORD.findall(segment)
        if words:
            runs.append(tuple(words))
    return runs


def _repeated(units: Sequence[Sequence[Run]], low: int, high: int, joiner: str) -> dict[str, _Gram]:
    """Every n-gram (low <= n <= high) held by at least MIN_REPLIES replies."""
    base_count: Counter[Run] = Counter()
    for runs in units:
        base_count.update({run[i : i + low] for run in runs for i in range(len(run) - low + 1)})
    frequent = {gram for gram, count in base_count.items() if count >= MIN_REPLIES}
    if not frequent:
        return {}
    holders: dict[Run, list[int]] = {}
    for index, runs in enumerate(units):
        seen: set[Run] = set()
        for run in runs:
            marks = [run[i : i + low] in frequent for i in range(len(run) - low + 1)]
            for start, is_frequent in enumerate(marks):
                if not is_frequent:
                    continue
                for size in range(low, high + 1):
                    end = start + size - low  # where the n-gram's last base n-gram starts
                    if end >= len(marks):
                        break
                    if marks[end]:
                        seen.add(run[start : start + size])
        for gram in seen:
            holders.setdefault(gram, []).append(index)
    repeated: dict[str, _Gram] = {}
    for gram, replies in holders.items():
        if len(replies) >= MIN_REPLIES:
            phrase = gram if isinstance(gram, str) else joiner.join(gram)
            repeated[phrase] = _Gram(phrase, len(replies), replies[0])
    return repeated


def _without_parts(grams: dict[str, _Gram]) -> list[_Gram]:
    """Most repeated first, longer first; a phrase inside a kept one repeated as often is dropped."""
    ordered = sorted(grams.values(), key=lambda g: (-g.replies, -len(g.phrase), g.phrase))
    kept: list[_Gram] = []
    for gram in ordered:
        if any(gram.phrase in longer.phrase and longer.replies >= gram.replies for longer in kept):
            continue
        kept.append(gram)
    return kept


def _example(reply: str, phrase: str, *, characters: bool) -> str:
    flat = " ".join(reply.split())
    at = flat.lower().find(phrase if characters else phrase.split(" ")[0])
    if at < 0 or len(flat) <= EXAMPLE_CHARS:
        return flat[:EXAMPLE_CHARS]
    start = max(0, at - EXAMPLE_CHARS // 3)
    piece = flat[start : start + EXAMPLE_CHARS]
    return ("…" if start else "") + piece + ("…" if start + EXAMPLE_CHARS < len(flat) else "")


def repetition_analyse(*, replies: list[str], language: str) -> dict[str, Any]:
    """``summary`` and ``candidates`` for ``replies`` (newest first)."""
    characters = language in CHARACTER_LANGUAGES
    if characters:
        grams = _repeated([_character_units(r, language) for r in replies], *_CHAR_SIZES, joiner="")
    else:
        grams = _repeated([_word_units(r) for r in replies], *_WORD_SIZES, joiner=" ")
    kept = _without_parts(grams)[:MAX_CANDIDATES]
    total = len(replies)
    candidates = [
        {
            "phrase": gram.phrase,
            "reply_count": gram.replies,
            "reply_share": round(gram.replies / total, 3) if total else 0.0,
            "example": _example(replies[gram.newest_reply], gram.phrase, characters=characters),
        }
        for gram in kept
    ]
    flat = [_normalised(reply, language) for reply in replies]
    repeating = {i for i, text in enumerate(flat) if any(g.phrase in text for g in kept)}
    return {
        "summary": {
            "assistant_messages_analyzed": total,
            "candidate_count": len(candidates),
            "replies_with_repetition": len(repeating),
            "unit": "character" if characters else "word",
        },
        "candidates": candidates,
    }


def _normalised(reply: str, language: str) -> str:
    lowered = reply.lower()
    if language == "ko":
        return " ".join(lowered.split())
    if language in CHARACTER_LANGUAGES:
        return "".join(lowered.split())
    return " ".join(_WORD.findall(lowered))
