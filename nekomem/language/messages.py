"""Chat messages as text: the bracketed asides a character's reply carries, and LangChain message
contents (a string or a list of parts). Pure functions on plain values."""

from __future__ import annotations

import re
from typing import Any

_BRACKETS = {"[": "]", "(": ")", "（": "）", "【": "】", "{": "}", "<": ">"}
_ANY_OPENER = re.compile("[" + re.escape("".join(_BRACKETS)) + "]")


def strip_bracketed(text: str) -> str:
    """Remove every bracketed span with its contents: [] () （） 【】 {} <>.

    Nested spans go with their outer span. A closer that does not match the innermost open bracket, and
    an opener never closed, are kept as plain text. Removing "a (b) c" leaves "a c", not "a  c".
    """
    if _ANY_OPENER.search(text) is None:
        return text.strip()  # most messages: /new_dialog renders a whole window of them
    out: list[str] = []
    stack: list[tuple[str, int]] = []  # (expected closer, len(out) before the opener)
    after_removal = False
    for ch in text:
        if ch in _BRACKETS:
            stack.append((_BRACKETS[ch], len(out)))
            out.append(ch)
        elif stack and ch == stack[-1][0]:
            del out[stack.pop()[1] :]
            after_removal = True
        else:
            # Shrink the double space a removed span leaves between two words.
            if not (after_removal and ch == " " and out and out[-1] == " "):
                out.append(ch)
            after_removal = False
    return "".join(out).strip()


def message_text(content: Any) -> str:
    """Text of a LangChain message content: a string, or a list of parts (strings or
    ``{"type": "text", "text": ...}`` dicts; images and other parts are skipped), joined by newlines."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "\n".join(parts)
