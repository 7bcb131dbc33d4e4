"""What the MCP tools tell the model when a request cannot be done, in the character's language
(one module per locale under ``mcp_server/locales``, the same keys in each)."""

from __future__ import annotations

from typing import Any

from nekomem.language.tables import load_locale_tables

STRINGS: dict[str, dict[str, str]] = load_locale_tables("mcp_server.locales")


def text(language: str, key: str, **values: Any) -> str:
    return STRINGS.get(language, STRINGS["en"])[key].format(**values)
