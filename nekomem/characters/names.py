"""Character-name validation, shared by every route (the original's ``validate_lanlan_name``)."""

from __future__ import annotations

import unicodedata

MAX_NAME_LENGTH = 64
_FORBIDDEN = set('/\\:*?"<>|')
# The top-level route names the server answers (reference §1.7: a reserved route name is not a
# character name). tests/characters/test_names.py checks this against the URLconf.
RESERVED_NAMES = frozenset(
    {
        "admin",
        "api",
        "browse",
        "cache",
        "cancel_correction",
        "followup_topics",
        "get_persona",
        "get_recent_history",
        "get_settings",
        "health",
        "internal",
        "knowledge",
        "last_conversation_gap",
        "mcp",
        "memory_browser",
        "new_dialog",
        "process",
        "prompt-locale",
        "query_memory",
        "record_surfaced",
        "reflect",
        "release_character",
        "reload",
        "renew",
        "search_for_memory",
        "settle",
        "shutdown",
        "static",
    }
)


class InvalidCharacterName(ValueError):
    pass


def validate_character_name(name: str) -> str:
    """Return the name unchanged, or raise InvalidCharacterName with a reason a person can act on.

    Names become folder names in the file-compatible export, so anything that could escape or
    confuse a path is refused.
    """
    if not isinstance(name, str) or name.strip() == "":
        raise InvalidCharacterName("character name is empty")
    if name != name.strip():
        raise InvalidCharacterName("character name has leading or trailing whitespace")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidCharacterName(f"character name is longer than {MAX_NAME_LENGTH} characters")
    if name in {".", ".."}:
        raise InvalidCharacterName("character name cannot be '.' or '..'")
    if name.lower() in RESERVED_NAMES:
        raise InvalidCharacterName(f"character name {name!r} is a reserved route name")
    for ch in name:
        if ch in _FORBIDDEN:
            raise InvalidCharacterName(f"character name contains a forbidden character {ch!r}")
        if unicodedata.category(ch) in {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}:
            raise InvalidCharacterName("character name contains a control or invisible character")
    return name
