"""A real OpenAI-compatible chat-completions server on loopback, answering from a per-test script.

Usage in a test::

    def test_something(llm_server):
        llm_server.script(json_content({"summary": "..."}), error(500), "plain text reply")
        ...  # code under test calls nekomem.llm, which the fixture pointed at this server
        assert "temperature" not in llm_server.requests[0].json

Each POST to ``/v1/chat/completions`` or ``/chat/completions`` takes the next script item. An item is
a ``Reply`` (build one with the helpers below), a plain ``str`` (the assistant's text), or a callable
``(request_json) -> Reply | str`` for content-dependent answers. When the script is empty the
``fallback`` callable answers, if set; otherwise the server answers 500 with an explanation and the
fixture fails the test at teardown (set ``allow_unexpected = True`` when that is the point).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from nekomem.llm import reset_compat_cache

TEST_API_KEY = "sk-test-NEKOMEM-SECRET-0123456789"
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``raw_body`` replaces the whole response body when set."""

    status: int = 200
    content: str | None = "ok"
    finish_reason: str = "stop"
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: bytes | None = None
    content_type: str = "application/json"


ScriptItem = Reply | str | Callable[[Any], "Reply | str"]


def text(content: str, *, delay: float = 0.0) -> Reply:
    return Reply(content=content, delay=delay)


def json_content(value: Any, *, fenced: bool = False, prefix: str = "", suffix: str = "") -> Reply:
    """The assistant's content is ``value`` as JSON, optionally in a ```json fence and wrapped in prose."""
    body = json.dumps(value, ensure_ascii=False, indent=2)
    if fenced:
        body = f"```json\n{body}\n```"
    return Reply(content=f"{prefix}{body}{suffix}")


def error(status: int, *, message: str = "scripted error", retry_after: str | None = None) -> Reply:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    body = json.dumps({"error": {"message": message, "type": "scripted", "code": status}})
    return Reply(status=status, headers=headers, raw_body=body.encode())


def slow(seconds: float, then: Reply | str = "too late") -> Reply:
    """Answer only after ``seconds``: longer than the client timeout, this produces a timeout."""
    reply = then if isinstance(then, Reply) else Reply(content=then)
    return replace(reply, delay=seconds)


def truncated(content: str = '{"summary": "cut off') -> Reply:
    return Reply(content=content, finish_reason="length")


def raw(body: str | bytes, *, status: int = 200, content_type: str = "text/html") -> Reply:
    """A response body that is not a chat completion at all (a proxy page, garbage)."""
    data = body.encode() if isinstance(body, str) else body
    return Reply(status=status, raw_body=data, content_type=content_type)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes
    json: Any  # None when the body was not JSON


class ScriptedLLMServer:
    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.unexpected: list[str] = []
        self.allow_unexpected = False
        self.fallback: Callable[[Any], Reply | str] | None = None
        self._script: deque[ScriptItem] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            # A short poll interval: shutdown() waits up to one interval, once per test.
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="llm-test-server",
            daemon=True,
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def bodies(self) -> list[Any]:
        with self._lock:
            return [r.json for r in self.requests]

    def script(self, *items: ScriptItem) -> None:
        with self._lock:
            self._script.extend(items)

    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping on a scripted delay
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # --- called from handler threads ---

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self, request: RecordedRequest) -> Reply:
        if request.path not in CHAT_PATHS:
            return self._unexpected(f"{request.method} {request.path} is not a chat-completions route", 404)
        with self._lock:
            item = self._script.popleft() if self._script else self.fallback
        if item is None:
            return self._unexpected(f"unscripted request #{len(self.requests)} to {request.path}", 500)
        if callable(item) and not isinstance(item, Reply):
            item = item(request.json)
        return item if isinstance(item, Reply) else Reply(content=item)

    def _unexpected(self, why: str, status: int) -> Reply:
        with self._lock:
            self.unexpected.append(why)
        return error(status, message=f"llm test server: {why}; add a reply to llm_server.script()")

    def _wait(self, seconds: float) -> None:
        self._stopping.wait(seconds)


def completion_body(reply: Reply, model: str) -> bytes:
    if reply.raw_body is not None:
        return reply.raw_body
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        },
        ensure_ascii=False,
    ).encode()


def _handler_for(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self._serve("POST")

        def do_GET(self) -> None:
            self._serve("GET")

        def _serve(self, method: str) -> None:
            request = self._read_request(method)
            server._record(request)
            reply = server._next_reply(request)
            if reply.delay:
                server._wait(reply.delay)
            model = request.json.get("model", "") if isinstance(request.json, dict) else ""
            # A client that timed out has left: that was the point of the delay.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._write(reply, completion_body(reply, model))

        def _read_request(self, method: str) -> RecordedRequest:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            try:
                parsed = json.loads(body) if body else None
            except ValueError:
                parsed = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            return RecordedRequest(method=method, path=self.path, headers=headers, body=body, json=parsed)

        def _write(self, reply: Reply, body: bytes) -> None:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean; requests are recorded on the server object

    return Handler


@pytest.fixture
def llm_server(settings: Any) -> Iterator[ScriptedLLMServer]:
    """A started server; every tier of ``settings.LLM_TIERS`` points at it with its own model name.

    Models are ``test-<tier>-model``; the key is ``TEST_API_KEY``. Retries back off from 10 ms and
    the default timeout is 5 s so a mis-scripted test cannot hang.
    """
    server = ScriptedLLMServer()
    server.start()
    settings.LLM_TIERS = {
        tier: {"base_url": server.base_url, "api_key": TEST_API_KEY, "model": f"test-{tier}-model"}
        for tier in settings.LLM_TIER_NAMES
    }
    settings.LLM_RETRY_BASE_DELAY_SECONDS = 0.01
    settings.LLM_BACKGROUND_TIMEOUT_SECONDS = 5.0
    reset_compat_cache()
    try:
        yield server
    finally:
        server.stop()
        reset_compat_cache()
    if server.unexpected and not server.allow_unexpected:
        pytest.fail("llm test server got unexpected requests: " + "; ".join(server.unexpected))
