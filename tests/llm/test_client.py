"""The LLM client against a real loopback chat-completions server (tests/support/llm_server.py)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from nekomem.llm import (
    MAX_COMPLETION_TOKENS,
    LLMBadOutput,
    LLMError,
    LLMTruncated,
    chat,
    chat_json,
)
from tests.support.llm_server import (
    ScriptedLLMServer,
    error,
    raw,
    slow,
    text,
    truncated,
)

PROMPT = [{"role": "user", "content": "summarise: the master likes green tea"}]


def test_chat_returns_the_assistant_text_and_sends_the_agreed_request(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(text("hello from the model"))

    assert chat(tier="summary", messages=PROMPT) == "hello from the model"

    [request] = llm_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.json["model"] == "test-summary-model"
    assert request.json["messages"] == PROMPT
    assert request.json["max_completion_tokens"] == MAX_COMPLETION_TOKENS == 4096
    assert request.json["stream"] is False
    assert "temperature" not in request.json
    assert "max_tokens" not in request.json


def test_each_tier_uses_its_own_model(llm_server: ScriptedLLMServer) -> None:
    llm_server.script("a", "b")

    chat(tier="correction", messages=PROMPT)
    chat(tier="emotion", messages=PROMPT)

    assert [b["model"] for b in llm_server.bodies] == ["test-correction-model", "test-emotion-model"]


@pytest.mark.parametrize(
    ("thinking", "expected"),
    [
        (True, {"enable_thinking": True, "thinking": {"type": "enabled"}}),
        (False, {"enable_thinking": False, "thinking": {"type": "disabled"}}),
    ],
)
def test_thinking_switch_is_sent_in_both_common_forms(
    llm_server: ScriptedLLMServer, thinking: bool, expected: dict[str, Any]
) -> None:
    llm_server.script("ok")

    chat(tier="summary", messages=PROMPT, thinking=thinking)

    body = llm_server.bodies[0]
    assert {k: body[k] for k in expected} == expected


def test_thinking_none_leaves_the_model_default(llm_server: ScriptedLLMServer) -> None:
    llm_server.script("ok")

    chat(tier="correction", messages=PROMPT, thinking=None)

    assert "enable_thinking" not in llm_server.bodies[0]
    assert "thinking" not in llm_server.bodies[0]


@pytest.mark.parametrize(
    ("style", "present", "absent"),
    [("enable_thinking", "enable_thinking", "thinking"), ("thinking_type", "thinking", "enable_thinking")],
)
def test_a_tier_can_choose_one_thinking_form(
    llm_server: ScriptedLLMServer, settings: Any, style: str, present: str, absent: str
) -> None:
    settings.LLM_TIERS["summary"]["thinking_style"] = style
    llm_server.script("ok")

    chat(tier="summary", messages=PROMPT, thinking=True)

    assert present in llm_server.bodies[0]
    assert absent not in llm_server.bodies[0]


def test_authorization_header_carries_the_tier_key(llm_server: ScriptedLLMServer, settings: Any) -> None:
    llm_server.script("ok", "ok")

    chat(tier="summary", messages=PROMPT)
    settings.LLM_TIERS["summary"]["api_key"] = ""
    chat(tier="summary", messages=PROMPT)

    first, second = llm_server.requests
    assert first.headers["authorization"] == f"Bearer {settings.LLM_TIERS['emotion']['api_key']}"
    assert "authorization" not in second.headers  # keyless local servers get no header at all


def test_base_url_without_v1_or_with_the_full_path_both_work(
    llm_server: ScriptedLLMServer, settings: Any
) -> None:
    llm_server.script("one", "two")
    root = f"http://127.0.0.1:{llm_server.port}"

    settings.LLM_TIERS["summary"]["base_url"] = root + "/"
    assert chat(tier="summary", messages=PROMPT) == "one"
    settings.LLM_TIERS["summary"]["base_url"] = root + "/v1/chat/completions"
    assert chat(tier="summary", messages=PROMPT) == "two"

    assert [r.path for r in llm_server.requests] == ["/chat/completions", "/v1/chat/completions"]


def test_callable_script_items_answer_from_the_request(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(lambda body: f"echo:{body['messages'][-1]['content']}")

    assert chat(tier="summary", messages=[{"role": "user", "content": "ping"}]) == "echo:ping"


def test_content_given_as_typed_parts_is_joined(llm_server: ScriptedLLMServer) -> None:
    body = (
        b'{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":'
        b'[{"type":"text","text":"part one, "},{"type":"text","text":"part two"}]}}]}'
    )
    llm_server.script(raw(body, content_type="application/json"))

    assert chat(tier="summary", messages=PROMPT) == "part one, part two"


# --- retries ---------------------------------------------------------------------------------------


def test_a_server_error_is_retried_then_succeeds(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(error(500), error(503), "third time lucky")

    assert chat(tier="summary", messages=PROMPT) == "third time lucky"
    assert len(llm_server.requests) == 3


def test_server_errors_exhaust_the_attempts(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(error(502), error(502))

    with pytest.raises(LLMError) as caught:
        chat(tier="summary", messages=PROMPT, max_attempts=2)

    assert caught.value.attempts == 2
    assert caught.value.status == 502
    assert "HTTP 502" in str(caught.value)
    assert len(llm_server.requests) == 2


def test_backoff_doubles_from_the_configured_base(llm_server: ScriptedLLMServer, settings: Any) -> None:
    settings.LLM_RETRY_BASE_DELAY_SECONDS = 0.1
    llm_server.script(error(500), error(500), "ok")

    started = time.monotonic()
    chat(tier="summary", messages=PROMPT)

    assert time.monotonic() - started >= 0.1 + 0.2


def test_429_waits_for_retry_after(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(error(429, retry_after="0.4"), "after the wait")

    started = time.monotonic()
    assert chat(tier="summary", messages=PROMPT) == "after the wait"

    assert time.monotonic() - started >= 0.4  # the base back-off is only 10 ms in tests
    assert len(llm_server.requests) == 2


def test_429_asking_for_a_long_wait_gives_up_at_once(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(error(429, retry_after="120"))

    started = time.monotonic()
    with pytest.raises(LLMError) as caught:
        chat(tier="summary", messages=PROMPT)

    assert caught.value.retry_after == 120
    assert time.monotonic() - started < 2
    assert len(llm_server.requests) == 1


def test_a_client_error_is_terminal_at_once(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(error(400, message="bad request: messages must not be empty"))

    with pytest.raises(LLMError) as caught:
        chat(tier="summary", messages=PROMPT)

    assert caught.value.status == 400
    assert "messages must not be empty" in str(caught.value)
    assert len(llm_server.requests) == 1


def test_a_slow_server_times_out_on_every_attempt(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(slow(3), slow(3), slow(3))

    started = time.monotonic()
    with pytest.raises(LLMError) as caught:
        chat(tier="summary", messages=PROMPT, timeout=0.3)

    assert "timeout" in str(caught.value)
    assert caught.value.attempts == 3
    assert time.monotonic() - started < 2.5  # three 0.3 s attempts, not three 3 s waits
    assert len(llm_server.requests) == 3


def test_a_timeout_is_retried_then_succeeds(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(slow(3), "on time")

    assert chat(tier="summary", messages=PROMPT, timeout=0.3) == "on time"


def test_the_default_timeout_comes_from_settings(llm_server: ScriptedLLMServer, settings: Any) -> None:
    settings.LLM_BACKGROUND_TIMEOUT_SECONDS = 0.3
    llm_server.script(slow(3))

    with pytest.raises(LLMError, match="timeout"):
        chat(tier="summary", messages=PROMPT, max_attempts=1)


def test_an_unconnectable_provider_is_a_network_error(llm_server: ScriptedLLMServer, settings: Any) -> None:
    llm_server.stop()  # nothing listens on the port any more
    settings.LLM_TIERS["summary"]["base_url"] = llm_server.base_url

    with pytest.raises(LLMError, match="network error") as caught:
        chat(tier="summary", messages=PROMPT, max_attempts=2)

    assert caught.value.attempts == 2


# --- reply shapes ---------------------------------------------------------------------------------


def test_a_truncated_reply_is_reported_distinctly_and_not_retried(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(truncated('{"summary": "the master li'))

    with pytest.raises(LLMTruncated) as caught:
        chat_json(tier="summary", messages=PROMPT, expect=dict)

    assert caught.value.partial_text == '{"summary": "the master li'
    assert "master" not in str(caught.value)
    assert len(llm_server.requests) == 1


def test_a_non_json_http_body_is_bad_output(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(raw("<html>502 Bad Gateway</html>"))

    with pytest.raises(LLMBadOutput, match="not a chat completion"):
        chat(tier="summary", messages=PROMPT)


def test_an_empty_reply_is_bad_output(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(text(""))

    with pytest.raises(LLMBadOutput, match="no content"):
        chat(tier="summary", messages=PROMPT)


# --- provider quirks -------------------------------------------------------------------------------


def test_a_provider_rejecting_the_thinking_fields_gets_them_dropped_and_remembered(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.script(error(400, message="Unrecognized request argument supplied: enable_thinking"), "a", "b")

    assert chat(tier="summary", messages=PROMPT, thinking=True) == "a"
    assert chat(tier="summary", messages=PROMPT, thinking=True) == "b"

    first, resent, later = llm_server.bodies
    assert first["enable_thinking"] is True
    assert "enable_thinking" not in resent and "thinking" not in resent
    assert "enable_thinking" not in later and "thinking" not in later  # no second 400 round trip


def test_a_provider_rejecting_max_completion_tokens_gets_max_tokens(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(error(400, message="Unsupported parameter: 'max_completion_tokens'"), "ok")

    assert chat(tier="summary", messages=PROMPT) == "ok"

    resent = llm_server.bodies[1]
    assert resent["max_tokens"] == 4096
    assert "max_completion_tokens" not in resent


def test_an_unrelated_400_is_not_resent(llm_server: ScriptedLLMServer) -> None:
    llm_server.script(error(400, message="context length exceeded"))

    with pytest.raises(LLMError):
        chat(tier="summary", messages=PROMPT, thinking=True)

    assert len(llm_server.requests) == 1


@pytest.mark.parametrize(("asked", "used"), [(None, 5.0), (30, 30.0), (500, 110.0)])
def test_the_per_attempt_timeout_is_capped_at_110_seconds(
    llm_server: ScriptedLLMServer, asked: float | None, used: float
) -> None:
    from nekomem.llm.client import _effective_timeout  # a pure helper; no request needed

    assert _effective_timeout(asked) == used


def test_calls_share_one_tls_context(llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # Loading the CA bundle for each call's client cost 23 ms of CPU a call; it is loaded once a process.
    import ssl

    from nekomem.llm import client

    made: list[ssl.SSLContext] = []
    real = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(ssl, "create_default_context", counted)
    client._tls_context.cache_clear()
    llm_server.script(text("one"), text("two"), text("three"))
    assert [chat(tier="summary", messages=PROMPT) for _ in range(3)] == ["one", "two", "three"]
    assert len(made) == 1
