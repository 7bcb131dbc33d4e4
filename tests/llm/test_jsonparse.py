"""Lenient JSON extraction (pure functions)."""

from __future__ import annotations

from typing import Any

import pytest

from nekomem.llm.jsonparse import JSONNotFound, parse_lenient


@pytest.mark.parametrize(
    ("reply", "expect", "value"),
    [
        ('```json\n{"a": 1}\n```', dict, {"a": 1}),
        ("```\n[1, 2]\n```", list, [1, 2]),
        ('```json\n{"a": 1}', dict, {"a": 1}),  # fence never closed
        ('{"a": [1, 2,],}', dict, {"a": [1, 2]}),
        ('{"text": "a, }", }', dict, {"text": "a, }"}),  # the comma inside the string stays
        ("{“a”: “b”}", dict, {"a": "b"}),
        ('{"q": "他说“你好”"}', dict, {"q": "他说“你好”"}),  # valid JSON is never repaired
        ("{“q”: “他说“你好”了”}", dict, {"q": "他说“你好”了"}),
        ('{“q”: “say "hi"”}', dict, {"q": 'say "hi"'}),
        ('Step [1] first, then {"a": 1}', dict, {"a": 1}),
        ("{not json} and [3]", list, [3]),
        ('{"a": 1} and {"b": 2}', dict, {"a": 1}),
    ],
)
def test_parse_lenient_finds_the_value(reply: str, expect: type, value: Any) -> None:
    assert parse_lenient(reply, expect) == value


def test_a_value_of_the_wrong_type_is_returned_whole_not_mined() -> None:
    assert parse_lenient('[{"summary": "x"}]', dict) == [{"summary": "x"}]


@pytest.mark.parametrize("reply", ["", "no json here", "{broken", "{" * 500])
def test_no_json_raises(reply: str) -> None:
    with pytest.raises(JSONNotFound):
        parse_lenient(reply, dict)
