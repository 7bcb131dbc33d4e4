"""OpenAI-compatible chat-completions client (reference §7). No business logic.

What we send, and why:

- ``model``, ``messages``, ``stream: false`` and ``max_completion_tokens: 4096`` (the output guard).
  Never ``temperature`` (§7). ``max_completion_tokens`` is the current OpenAI name; if a provider
  answers 400 naming it, we resend once with the legacy ``max_tokens`` and remember that for the
  endpoint and model (see ``_downgrade``).
- The thinking switch, by the tier's ``thinking_style`` (default ``"both"``):
  ``enable_thinking: bool`` (Qwen / DashScope, vLLM and SGLang Qwen templates) and
  ``thinking: {"type": "enabled" | "disabled"}`` (DeepSeek, GLM / Zhipu, Doubao / Volcengine, Kimi).
  ``thinking=None`` sends neither and leaves the model's native default. A provider that rejects the
  fields with a 400 naming them gets the same request without them, once, and is remembered.
- ``Authorization: Bearer <key>`` only when a key is configured (local servers need none).

Failures: network errors, timeouts, 5xx and 429 are retried with exponential back-off
(``LLM_RETRY_BASE_DELAY_SECONDS`` × 1, 2, 4 …; a 429's ``Retry-After`` is honoured up to
``LLM_RETRY_AFTER_MAX_SECONDS``, beyond which we give up at once so the scheduler retries later).
Any other 4xx is terminal. ``timeout`` bounds each attempt (connect to last byte), never above 110 s.
"""

from __future__ import annotations

import functools
import json
import logging
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
from django.conf import settings

from nekomem.llm.config import TierConfig, require_provider
from nekomem.llm.errors import LLMBadOutput, LLMError, LLMTruncated
from nekomem.llm.jsonparse import JSONNotFound, parse_lenient

logger = logging.getLogger("nekomem.llm")

MAX_COMPLETION_TOKENS = 4096
HARD_TIMEOUT_SECONDS = 110.0
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
_PROVIDER_TEXT_CHARS = 200  # how much of a provider's error body goes into an exception message

# Endpoint+model pairs whose provider rejected an optional field: {(url, model): {"thinking", ...}}.
_downgrades: dict[tuple[str, str], set[str]] = {}
_downgrades_lock = threading.Lock()


class _Retryable(Exception):
    """One attempt failed in a way worth retrying; ``wait`` is the provider's Retry-After, if any."""

    def __init__(self, kind: str, status: int | None = None, wait: float | None = None) -> None:
        super().__init__(kind)
        self.kind = kind
        self.status = status
        self.wait = wait


@dataclass
class _Call:
    cfg: TierConfig
    url: str
    headers: dict[str, str]
    messages: list[dict[str, Any]]
    thinking: bool | None
    timeout: float

    def meta(self, attempts: int, status: int | None = None) -> dict[str, Any]:
        return {"tier": self.cfg.tier, "model": self.cfg.model, "attempts": attempts, "status": status}


def chat(
    *,
    tier: str,
    messages: list[dict[str, Any]],
    thinking: bool | None = False,
    timeout: float | None = None,
    max_attempts: int = 3,
) -> str:
    """The assistant's reply text. Raises LLMUnavailable, LLMTruncated or LLMError."""
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    cfg = require_provider(tier)
    call = _Call(
        cfg=cfg,
        url=_endpoint(cfg.base_url),
        headers=_headers(cfg.api_key),
        messages=messages,
        thinking=thinking,
        timeout=_effective_timeout(timeout),
    )
    started = time.monotonic()
    with httpx.Client(timeout=call.timeout, follow_redirects=False, verify=_tls_context()) as client:
        text, attempts = _with_retries(client, call, max_attempts)
    logger.info(
        "llm call ok tier=%s model=%s attempts=%d elapsed_ms=%d",
        cfg.tier,
        cfg.model,
        attempts,
        (time.monotonic() - started) * 1000,
    )
    return text


def chat_json(
    *,
    tier: str,
    messages: list[dict[str, Any]],
    expect: type,
    thinking: bool | None = False,
    timeout: float | None = None,
    max_attempts: int = 3,
    validate: Callable[[Any], Any] | None = None,
) -> Any:
    """The reply parsed as JSON of type ``expect`` (dict or list), fences and slips tolerated.

    ``validate`` receives the value and may raise (ValueError, TypeError, KeyError, …) to reject it,
    or return a normalised replacement (None keeps the value). A wrong shape raises LLMBadOutput;
    it is not re-asked here, callers decide whether a new prompt is worth it.
    """
    if expect not in (dict, list):
        raise ValueError("expect must be dict or list")
    text = chat(tier=tier, messages=messages, thinking=thinking, timeout=timeout, max_attempts=max_attempts)
    cfg = require_provider(tier)
    meta = {"tier": cfg.tier, "model": cfg.model}
    try:
        value = parse_lenient(text, expect)
    except JSONNotFound:
        raise LLMBadOutput(f"llm {tier}: reply contains no JSON", raw_text=text, **meta) from None
    if not isinstance(value, expect):
        found = type(value).__name__
        raise LLMBadOutput(
            f"llm {tier}: expected a JSON {expect.__name__}, got {found}", raw_text=text, **meta
        )
    return _validated(value, validate, text, meta)


def _validated(value: Any, validate: Callable[[Any], Any] | None, text: str, meta: dict[str, Any]) -> Any:
    if validate is None:
        return value
    try:
        replaced = validate(value)
    except LLMBadOutput:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise LLMBadOutput(
            f"llm {meta['tier']}: reply failed validation ({type(exc).__name__}: {exc})",
            raw_text=text,
            **meta,
        ) from exc
    return value if replaced is None else replaced


def reset_compat_cache() -> None:
    """Forget remembered provider downgrades (tests; or after a provider's configuration changes)."""
    with _downgrades_lock:
        _downgrades.clear()


# --- one call, with retries -------------------------------------------------------------------------


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context a process, as httpx would make it (certifi, or ``SSL_CERT_FILE``).

    httpx builds a new one for every client it is not given one, loading the whole CA bundle: 23 ms of
    CPU per LLM call, more than half of what the cluster spent under the chat load (py-spy)."""
    return httpx.create_ssl_context()


def _with_retries(client: httpx.Client, call: _Call, max_attempts: int) -> tuple[str, int]:
    attempt = 0
    while True:
        attempt += 1
        try:
            return _attempt(client, call, attempt), attempt
        except _Retryable as failure:
            delay = _retry_delay(attempt, failure)
            if attempt >= max_attempts or delay is None:
                raise _terminal(call, attempt, failure, delay is None) from None
            logger.warning(
                "llm attempt failed tier=%s model=%s attempt=%d/%d reason=%s status=%s retry_in_ms=%d",
                call.cfg.tier,
                call.cfg.model,
                attempt,
                max_attempts,
                failure.kind,
                failure.status,
                delay * 1000,
            )
            time.sleep(delay)


def _retry_delay(attempt: int, failure: _Retryable) -> float | None:
    """Seconds to wait before the next attempt; None when a 429 asks for too long a wait."""
    base = float(getattr(settings, "LLM_RETRY_BASE_DELAY_SECONDS", 1.0))
    backoff = base * 2 ** (attempt - 1)
    if failure.wait is None:
        return backoff
    if failure.wait > float(getattr(settings, "LLM_RETRY_AFTER_MAX_SECONDS", 10.0)):
        return None
    return max(failure.wait, backoff)


def _terminal(call: _Call, attempts: int, failure: _Retryable, wait_too_long: bool) -> LLMError:
    meta = call.meta(attempts, failure.status)
    if wait_too_long:
        return LLMError(
            f"llm {call.cfg.tier}: rate limited, provider asks to wait {failure.wait:g}s",
            retry_after=failure.wait,
            **meta,
        )
    status = f" (HTTP {failure.status})" if failure.status else ""
    return LLMError(f"llm {call.cfg.tier}: {failure.kind}{status} after {attempts} attempt(s)", **meta)


def _attempt(client: httpx.Client, call: _Call, attempt: int) -> str:
    """One request, plus at most one resend per optional field the provider rejects."""
    while True:
        payload = _payload(call)
        status, body, retry_after = _post(client, call, payload)
        if status == 200:
            return _reply_text(call, body, attempt)
        if status == 429:
            raise _Retryable("rate limited", status, retry_after)
        if status >= 500:
            raise _Retryable("server error", status)
        if status in (400, 422) and _downgrade(call, payload, body):
            continue
        raise LLMError(
            f"llm {call.cfg.tier}: HTTP {status}: {_provider_text(call, body)}", **call.meta(attempt, status)
        )


def _post(client: httpx.Client, call: _Call, payload: dict[str, Any]) -> tuple[int, bytes, float | None]:
    deadline = time.monotonic() + call.timeout
    try:
        with client.stream("POST", call.url, json=payload, headers=call.headers) as response:
            body = _read_body(response, deadline)
            return response.status_code, body, _retry_after(response.headers.get("retry-after"))
    except httpx.TimeoutException:
        raise _Retryable("timeout") from None
    except httpx.TransportError as exc:
        raise _Retryable(f"network error ({type(exc).__name__})") from None


def _read_body(response: httpx.Response, deadline: float) -> bytes:
    # httpx timeouts are per read; the deadline makes the per-attempt timeout a hard bound even
    # against a server that drips bytes.
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("per-attempt deadline passed")
        if size > MAX_RESPONSE_BYTES:
            raise httpx.ReadError("response too large")
    return b"".join(chunks)


def _retry_after(raw: str | None) -> float | None:
    # Only the delta-seconds form; an HTTP date is rare from LLM providers and treated as absent.
    if not raw:
        return None
    try:
        seconds = float(raw.strip())
    except ValueError:
        return None
    return max(seconds, 0.0)


# --- request and response shapes --------------------------------------------------------------------


def _endpoint(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"


def _headers(api_key: str) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def _effective_timeout(timeout: float | None) -> float:
    chosen = float(settings.LLM_BACKGROUND_TIMEOUT_SECONDS if timeout is None else timeout)
    if chosen <= 0:
        raise ValueError("timeout must be positive")
    return min(chosen, HARD_TIMEOUT_SECONDS)


def _payload(call: _Call) -> dict[str, Any]:
    dropped = _downgrades_for(call)
    payload: dict[str, Any] = {"model": call.cfg.model, "messages": call.messages, "stream": False}
    if "max_completion_tokens" in dropped:
        payload["max_tokens"] = MAX_COMPLETION_TOKENS
    else:
        payload["max_completion_tokens"] = MAX_COMPLETION_TOKENS
    if call.thinking is not None and "thinking" not in dropped:
        payload.update(_thinking_fields(call.cfg.thinking_style, call.thinking))
    return payload


def _thinking_fields(style: str, on: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if style in ("both", "enable_thinking"):
        fields["enable_thinking"] = on
    if style in ("both", "thinking_type"):
        fields["thinking"] = {"type": "enabled" if on else "disabled"}
    return fields


def _downgrades_for(call: _Call) -> set[str]:
    with _downgrades_lock:
        return set(_downgrades.get((call.url, call.cfg.model), ()))


def _downgrade(call: _Call, payload: dict[str, Any], body: bytes) -> bool:
    """Remember and report whether a 400 names an optional field we sent, so it can be resent."""
    text = body.decode("utf-8", "replace").lower()
    sent_thinking = "enable_thinking" in payload or "thinking" in payload
    feature = ""
    if "max_completion_tokens" in payload and "max_completion_tokens" in text:
        feature = "max_completion_tokens"
    elif sent_thinking and "thinking" in text:
        feature = "thinking"
    if not feature:
        return False
    with _downgrades_lock:
        _downgrades.setdefault((call.url, call.cfg.model), set()).add(feature)
    logger.warning(
        "llm provider rejected %s; resending without it tier=%s model=%s",
        feature,
        call.cfg.tier,
        call.cfg.model,
    )
    return True


def _reply_text(call: _Call, body: bytes, attempt: int) -> str:
    meta = call.meta(attempt, 200)
    try:
        data = json.loads(body)
        choice = data["choices"][0]
        message = choice.get("message") or {}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raw = body[:2000].decode("utf-8", "replace")
        raise LLMBadOutput(
            f"llm {call.cfg.tier}: response is not a chat completion", raw_text=raw, **meta
        ) from None
    text = _content_text(message.get("content"))
    if choice.get("finish_reason") == "length":
        raise LLMTruncated(
            f"llm {call.cfg.tier}: reply truncated at the output limit", partial_text=text, **meta
        )
    if not text.strip():
        raise LLMBadOutput(f"llm {call.cfg.tier}: reply has no content", **meta)
    return text


def _content_text(content: Any) -> str:
    # Some providers return a list of typed parts instead of a string.
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _provider_text(call: _Call, body: bytes) -> str:
    """A short, key-free excerpt of a provider's error body for the exception message."""
    text = body.decode("utf-8", "replace")
    try:
        error = json.loads(text).get("error")
        text = error.get("message", text) if isinstance(error, dict) else str(error or text)
    except (ValueError, AttributeError):
        pass
    if call.cfg.api_key:
        # Providers sometimes echo the key they rejected.
        text = text.replace(call.cfg.api_key, "[redacted]")
    return " ".join(text.split())[:_PROVIDER_TEXT_CHARS]
