"""Lenient JSON extraction from model replies. Pure functions, no Django.

Models wrap JSON in markdown fences, prefix it with prose, use typographic quotes as delimiters and
leave trailing commas. We try the strict parse first and repair only when it fails, so valid JSON
whose strings contain “smart quotes” (common in Chinese text) is never altered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_FENCE = re.compile(r"```[^\n`]*\n?(.*?)```", re.DOTALL)
_OPEN_FENCE = re.compile(r"^\s*```[^\n`]*\n")
_SMART_DOUBLE = "“”„‟"  # “ ” „ ‟
_MAX_CANDIDATES = 64  # opener positions tried per text: bounds the work on brace-heavy prose


class JSONNotFound(ValueError):
    """No JSON value of any kind could be read from the text."""


def strip_fences(text: str) -> list[str]:
    """Texts to try, best first: each fenced block, then the whole reply (unclosed fence removed)."""
    blocks = [m.group(1) for m in _FENCE.finditer(text)]
    return [*blocks, _OPEN_FENCE.sub("", text, count=1)]


def parse_lenient(text: str, expect: type | None = None) -> Any:
    """The first top-level JSON value in ``text`` of type ``expect`` (dict or list; None: any).

    Values of another type are stepped over whole (never searched inside), so a list of objects is
    reported as a list rather than mined for its first object. Returns the first value of another
    type when no value of ``expect`` exists, so the caller can name the wrong shape; raises
    JSONNotFound when there is no JSON at all.
    """
    others: list[Any] = []
    for candidate in strip_fences(text):
        for value in _top_level_values(candidate):
            if expect is None or isinstance(value, expect):
                return value
            others.append(value)
    if others:
        return others[0]
    raise JSONNotFound("no JSON object or array found")


def _top_level_values(text: str) -> Iterator[Any]:
    """Each JSON object/array in reading order, resuming after the end of the one just read."""
    pos, tries = 0, 0
    while tries < _MAX_CANDIDATES:
        pos = _next_opener(text, pos)
        if pos < 0:
            return
        tries += 1
        decoded = _decode_at(text, pos)
        if decoded is None:
            pos += 1
            continue
        value, consumed = decoded
        yield value
        pos += consumed


def _next_opener(text: str, start: int) -> int:
    found = [i for i in (text.find("{", start), text.find("[", start)) if i >= 0]
    return min(found) if found else -1


def _decode_at(text: str, pos: int) -> tuple[Any, int] | None:
    """The value starting at ``pos`` and how many characters of ``text`` it spans."""
    decoder = json.JSONDecoder()
    try:
        value, end = decoder.raw_decode(text, pos)
        return value, end - pos
    except (ValueError, RecursionError):
        pass
    repaired, consumed = repair_value(text[pos:])
    try:
        value, _end = decoder.raw_decode(repaired)
    except (ValueError, RecursionError):
        return None
    return value, consumed


def repair_value(text: str) -> tuple[str, int]:
    """Fix the slips models make outside strings (typographic quote delimiters, trailing commas) in
    the bracketed value that starts ``text``; returns it and how many characters of ``text`` it spans.

    A single pass that tracks string state, so commas and quotes inside string values are kept.
    """
    out: list[str] = []
    closer = ""  # the quotes that end the current string; "" when outside a string
    depth = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if closer:
            i, closed = _repair_in_string(text, i, closer, out)
            closer = "" if closed else closer
            continue
        i += 1
        if ch == '"' or ch in _SMART_DOUBLE:
            closer = '"' if ch == '"' else _SMART_DOUBLE
            out.append('"')
            continue
        if ch == "," and _next_significant(text, i) in ("}", "]"):
            continue  # drop the trailing comma
        out.append(ch)
        depth += (ch in "{[") - (ch in "}]")
        if depth <= 0:
            break
    return "".join(out), i


def _repair_in_string(text: str, i: int, closer: str, out: list[str]) -> tuple[int, bool]:
    """Copy one character (or escape) of a string; returns the next index and whether it closed."""
    ch = text[i]
    if ch == "\\" and i + 1 < len(text):
        out.append(text[i : i + 2])
        return i + 2, False
    if ch in closer and (closer == '"' or _closes_smart_string(text, i + 1)):
        out.append('"')
        return i + 1, True
    out.append('\\"' if ch == '"' else ch)  # a plain quote inside a “…” string must be escaped
    return i + 1, False


def _closes_smart_string(text: str, after: int) -> bool:
    # Inside “…” a further smart quote ends the string only if JSON structure follows it;
    # otherwise it is a quotation inside the value.
    return _next_significant(text, after) in (":", ",", "}", "]", "")


def _next_significant(text: str, start: int) -> str:
    for ch in text[start:]:
        if not ch.isspace():
            return ch
    return ""
