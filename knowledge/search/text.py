"""Text rules of the knowledge search: the surfaces an exact match compares, and the guards that keep
pack text (third-party, untrusted) from posing as conversation structure inside the answer block."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Chat-template control tokens (ChatML, Llama 3 headers, end-of-text): each one a role switch for a model.
_CHAT_TOKEN_RE = re.compile(
    r"<\|\s*(?:im_start|im_end|im_sep|endoftext|system|user|assistant|"
    r"start_header_id|end_header_id|eot_id|begin_of_text)\s*\|>",
    re.IGNORECASE,
)
# Characters that render as nothing (zero-width, bidi controls, BOM, variation selectors, tags): removed,
# and tolerated before a role marker, so an invisible prefix cannot hide one.
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e0fff"
)
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}\x80-\x9f]")
_ROLE_MARKER_RE = re.compile(
    rf"(?im)^[ \t{_INVISIBLE}]*(?:system|developer|assistant|user|human)[ \t{_INVISIBLE}]*[:：]"
)
_LINE_BREAKS = str.maketrans({"\u0085": "\n", "\u2028": "\n", "\u2029": "\n", "\r": "\n"})
_FENCE_RUN_RE = re.compile(r"={3,}")
_SPACE_RE = re.compile(r"\s+")
# Removing a token can join the halves of another ("<|im_<|im_end|>start|>"): rescan until nothing changes,
# a bounded number of times (each pass is linear; deliberately deep nesting is defused instead).
_MARKUP_PASSES = 16


def strip_chat_markup(text: str) -> str:
    """``text`` without chat-control tokens and line-leading role markers, to a fixed point."""
    text = _INVISIBLE_RE.sub("", text.translate(_LINE_BREAKS))
    for _ in range(_MARKUP_PASSES):
        cleaned = _ROLE_MARKER_RE.sub("", _CHAT_TOKEN_RE.sub("", text))
        if cleaned == text:
            return cleaned
        text = cleaned
    # Still changing: break every remaining angle bracket and role colon rather than rescan forever.
    text = text.replace("<", "\u2039").replace(">", "\u203a")
    return _ROLE_MARKER_RE.sub(lambda match: match.group(0)[:-1] + "\u2236", text)


def neutralize_fence(text: str) -> str:
    """Shorten every run of three or more ``=`` so a card can never write a fence line."""
    return _FENCE_RUN_RE.sub("==", text)


def safe_text(text: str) -> str:
    return neutralize_fence(strip_chat_markup(text))


def single_line(text: str, max_chars: int) -> str:
    return _SPACE_RE.sub(" ", text).strip()[:max_chars]


# --- exact-match surfaces ----------------------------------------------------------------------------

# Trailing sentence punctuation a typed name may carry ("Python?", "绝绝子？").
_TRAILING_PUNCTUATION = frozenset("?!.。？！,，、;；:：…")
_EDGE_QUOTES = frozenset("\"'`")


def _without_marks(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


@lru_cache(maxsize=65_536)
def strict_surface(text: str) -> str:
    """NFKC, case-folded, marks dropped, whitespace collapsed; symbols kept, so C, C++ and C# differ."""
    folded = _without_marks(unicodedata.normalize("NFKC", text).casefold())
    return _SPACE_RE.sub(" ", folded).strip()


@lru_cache(maxsize=65_536)
def loose_surface(text: str) -> str:
    """The fallback surface: letters and digits only, after surrounding brackets, quotes and trailing
    sentence punctuation are dropped ("「绝绝子」", "re:zero", "Re Zero?" meet). A name that still
    starts or ends with a symbol ("C++", ".NET") has none (""): without the symbol it is another name."""
    surface = strict_surface(text)
    start, end = 0, len(surface)
    while start < end and (
        surface[start] == " "
        or surface[start] in _EDGE_QUOTES
        or unicodedata.category(surface[start]) in ("Ps", "Pi")
    ):
        start += 1
    while end > start and (
        surface[end - 1] == " "
        or surface[end - 1] in _EDGE_QUOTES
        or surface[end - 1] in _TRAILING_PUNCTUATION
        or unicodedata.category(surface[end - 1]) in ("Pe", "Pf")
    ):
        end -= 1
    core = surface[start:end]
    if not core or not core[0].isalnum() or not core[-1].isalnum():
        return ""
    return "".join(ch for ch in core if ch.isalnum())


_CJK_RE = re.compile(r"^[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+$")


def is_cjk_trigram(token: str) -> bool:
    """A CJK 3-gram of the recall tokeniser: coverage counts only its bigrams, as the original's did."""
    return len(token) == 3 and bool(_CJK_RE.match(token))
