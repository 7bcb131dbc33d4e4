"""Tier configuration: unavailable providers, fallback to summary, key hygiene in logs and errors."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from nekomem.llm import LLMError, LLMUnavailable, chat, provider_status, tier_config
from tests.support.llm_server import TEST_API_KEY, ScriptedLLMServer, error, text

PROMPT = [{"role": "user", "content": "the master's diary: 今天很累"}]


@pytest.mark.parametrize("missing", ["base_url", "model"])
def test_a_tier_without_provider_is_unavailable(
    llm_server: ScriptedLLMServer, settings: Any, missing: str
) -> None:
    settings.LLM_TIERS["summary"][missing] = ""

    with pytest.raises(LLMUnavailable) as caught:
        chat(tier="summary", messages=PROMPT)

    assert caught.value.reason == "no provider for tier summary"
    assert provider_status("summary") == "no provider for tier summary"
    assert llm_server.requests == []


def test_a_configured_tier_has_no_status_reason(llm_server: ScriptedLLMServer) -> None:
    assert provider_status("emotion") is None


def test_a_tier_without_base_url_falls_back_to_summary(llm_server: ScriptedLLMServer, settings: Any) -> None:
    settings.LLM_TIERS["emotion"] = {"base_url": "", "api_key": "", "model": ""}
    llm_server.script("ok")

    chat(tier="emotion", messages=PROMPT)

    assert llm_server.bodies[0]["model"] == "test-summary-model"
    assert tier_config("emotion").tier == "emotion"


def test_a_tier_with_its_own_provider_never_gets_the_summary_key(
    llm_server: ScriptedLLMServer, settings: Any
) -> None:
    settings.LLM_TIERS["correction"] = {"base_url": llm_server.base_url, "api_key": "", "model": "own"}
    llm_server.script("ok")

    chat(tier="correction", messages=PROMPT)

    assert "authorization" not in llm_server.requests[0].headers
    assert llm_server.bodies[0]["model"] == "own"


def test_an_unknown_tier_is_a_programming_error(llm_server: ScriptedLLMServer) -> None:
    with pytest.raises(ValueError, match="unknown LLM tier"):
        chat(tier="poetry", messages=PROMPT)


def test_the_api_key_never_reaches_logs_errors_or_reprs(
    llm_server: ScriptedLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    # The provider echoes the rejected key, as some real ones do.
    llm_server.script(error(500), error(401, message=f"Incorrect API key provided: {TEST_API_KEY}"))
    caplog.set_level(logging.DEBUG)

    with pytest.raises(LLMError) as caught:
        chat(tier="summary", messages=PROMPT)

    assert llm_server.requests[0].headers["authorization"] == f"Bearer {TEST_API_KEY}"  # it was sent
    assert "Incorrect API key provided" in str(caught.value)
    assert TEST_API_KEY not in str(caught.value)
    assert TEST_API_KEY not in repr(caught.value)
    assert TEST_API_KEY not in repr(tier_config("summary"))
    assert TEST_API_KEY not in caplog.text
    assert caplog.records  # the capture did see the client's logs


def test_info_logs_carry_metadata_but_no_prompt_or_reply(
    llm_server: ScriptedLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    llm_server.script(error(500), text("她今天很累，需要休息"))
    caplog.set_level(logging.INFO, logger="nekomem.llm")

    chat(tier="summary", messages=PROMPT)

    messages = [r.getMessage() for r in caplog.records if r.name == "nekomem.llm"]
    assert any(
        "tier=summary" in m and "model=test-summary-model" in m and "attempts=2" in m for m in messages
    )
    assert any("elapsed_ms=" in m for m in messages)
    assert not any("今天很累" in m or "需要休息" in m for m in messages)


def test_the_test_server_fails_loudly_on_an_unscripted_request(llm_server: ScriptedLLMServer) -> None:
    llm_server.allow_unexpected = True  # this test is about that failure

    with pytest.raises(LLMError, match="HTTP 500"):
        chat(tier="summary", messages=PROMPT, max_attempts=1)

    assert llm_server.unexpected == ["unscripted request #1 to /v1/chat/completions"]
