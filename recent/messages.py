"""Parsing and normalising LangChain-style message dicts from the chat server."""

from __future__ import annotations

import json
from typing import Any

from nekomem.http import HistoryParseError  # re-exported for callers
from nekomem.language.messages import message_text as content_text  # one text rule for every layer

MESSAGE_TYPES = ("human", "ai", "system")
# LangChain types the original stores but never renders: they go to the raw log only, never into
# the recent window, so no prompt (window, /new_dialog, compression) ever shows them.
UNRENDERED_TYPES = ("tool", "function", "chat")
# The chat server sometimes sends role names or class names instead of LangChain types.
_TYPE_ALIASES = {
    "human": "human",
    "user": "human",
    "humanmessage": "human",
    "ai": "ai",
    "assistant": "ai",
    "aimessage": "ai",
    "system": "system",
    "systemmessage": "system",
    "tool": "tool",
    "toolmessage": "tool",
    "function": "function",
    "functionmessage": "function",
    "chat": "chat",
    "chatmessage": "chat",
}

__all__ = [
    "HistoryParseError",
    "content_text",
    "message_text",
    "normalise_message",
    "parse_history",
    "window_messages",
]


def _normalise_content(content: Any, index: int) -> Any:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, (str, dict)) for p in content):
        return content
    raise HistoryParseError(f"message {index}: content must be a string or a list of parts")


def normalise_message(raw: Any, index: int = 0) -> dict[str, Any]:
    """Return ``{"type", "data"}`` with the fields LangChain's ``messages_to_dict`` writes."""
    if not isinstance(raw, dict):
        raise HistoryParseError(f"message {index} is not an object")
    raw_type = raw.get("type") if raw.get("type") is not None else raw.get("role")
    kind = _TYPE_ALIASES.get(str(raw_type).lower()) if raw_type is not None else None
    if kind is None:
        raise HistoryParseError(f"message {index} has unknown type {raw_type!r}")
    nested = raw.get("data")
    flat = {k: v for k, v in raw.items() if k != "role"}
    data: dict[str, Any] = nested if isinstance(nested, dict) else flat
    if "content" not in data:
        raise HistoryParseError(f"message {index} has no content")
    normalised: dict[str, Any] = {
        "content": _normalise_content(data["content"], index),
        "additional_kwargs": data.get("additional_kwargs") or {},
        "response_metadata": data.get("response_metadata") or {},
        "type": kind,
        "name": data.get("name"),
        "id": data.get("id"),
    }
    if kind == "ai":
        normalised["tool_calls"] = data.get("tool_calls") or []
        normalised["invalid_tool_calls"] = data.get("invalid_tool_calls") or []
        normalised["usage_metadata"] = data.get("usage_metadata")
    for key, value in data.items():  # keep extra fields such as ``metadata`` (theater capsules)
        normalised.setdefault(key, value)
    return {"type": kind, "data": normalised}


def parse_history(input_history: Any) -> list[dict[str, Any]]:
    """Parse the ``HistoryRequest.input_history`` JSON string into normalised messages."""
    if not isinstance(input_history, str):
        raise HistoryParseError("input_history must be a JSON string")
    try:
        decoded = json.loads(input_history)
    except json.JSONDecodeError as exc:
        raise HistoryParseError(f"input_history is not valid JSON: {exc.msg}") from exc
    if not isinstance(decoded, list):
        raise HistoryParseError("input_history must hold a list of messages")
    return [normalise_message(item, i) for i, item in enumerate(decoded)]


def message_text(message: dict[str, Any]) -> str:
    return content_text(message.get("data", {}).get("content"))


def window_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages that belong in the recent window: those of the types the prompts render."""
    return [m for m in messages if m["type"] in MESSAGE_TYPES]
