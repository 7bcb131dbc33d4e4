"""chat_json: fences, lenient parsing, shape checks, validation — through the loopback server."""

from __future__ import annotations

from typing import Any

import pytest

from nekomem.llm import LLMBadOutput, chat_json
from tests.support.llm_server import ScriptedLLMServer, json_content, text

PROMPT = [{"role": "user", "content": "extract facts"}]


def test_plain_json_object(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(json_content({"summary": "主人喜欢绿茶"}))

    assert chat_json(tier="summary", messages=PROMPT, expect=dict) == {"summary": "主人喜欢绿茶"}


def test_fenced_json_with_prose_around_it(llm_server: ScriptedLLMServer) -> None:
    facts = [{"text": "likes tea", "importance": 6}]
    llm_server.script(json_content(facts, fenced=True, prefix="Here you go:\n", suffix="\nHope it helps!"))

    assert chat_json(tier="summary", messages=PROMPT, expect=list) == facts


def test_trailing_commas_and_smart_quote_delimiters_are_tolerated(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(text("Sure! {“summary”: “他说“好的”了”, “count”: 2,}"))

    value = chat_json(tier="summary", messages=PROMPT, expect=dict)

    assert value == {"summary": "他说“好的”了", "count": 2}


def test_the_expected_type_is_found_after_a_value_of_another_type(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(text('Step [1] done. {"summary": "ok"}'))

    assert chat_json(tier="summary", messages=PROMPT, expect=dict) == {"summary": "ok"}


def test_the_wrong_top_level_type_is_bad_output(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(json_content([{"summary": "a list, not an object"}]))

    with pytest.raises(LLMBadOutput, match="expected a JSON dict, got list"):
        chat_json(tier="summary", messages=PROMPT, expect=dict)


def test_garbage_is_bad_output_and_keeps_the_text_off_the_message(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(text("I am sorry, I cannot summarise the master's secrets."))

    with pytest.raises(LLMBadOutput) as caught:
        chat_json(tier="summary", messages=PROMPT, expect=dict)

    assert "no JSON" in str(caught.value)
    assert "secrets" not in str(caught.value)
    assert "secrets" in caught.value.raw_text


def test_an_empty_object_is_returned_as_is_not_invented(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(json_content({}))

    assert chat_json(tier="summary", messages=PROMPT, expect=dict) == {}


def _require_summary(value: dict[str, Any]) -> None:
    if not isinstance(value.get("summary"), str) or not value["summary"]:
        raise ValueError("summary missing")


def test_validate_rejects_a_reply_missing_a_key(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(json_content({"对话摘要": "old key"}))

    with pytest.raises(LLMBadOutput, match="failed validation"):
        chat_json(tier="summary", messages=PROMPT, expect=dict, validate=_require_summary)


def test_validate_can_normalise_the_value(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(json_content({"对话摘要": "old key"}))

    value = chat_json(
        tier="summary",
        messages=PROMPT,
        expect=dict,
        validate=lambda v: {"summary": v.get("summary") or v["对话摘要"]},
    )

    assert value == {"summary": "old key"}


def test_expect_must_be_dict_or_list(llm_server: ScriptedLLMServer) -> None:
    with pytest.raises(ValueError, match="expect"):
        chat_json(tier="summary", messages=PROMPT, expect=str)
    assert llm_server.requests == []
