"""Character-name validation, shared by every route (the original's ``validate_lanlan_name``)."""

from __future__ import annotations

import unicodedata

MAX_NAME_LENGTH = 64
_FORBIDDEN = set('/\\:*?"<>|')


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
    for ch in name:
        if ch in _FORBIDDEN:
            raise InvalidCharacterName(f"character name contains a forbidden character {ch!r}")
        if unicodedata.category(ch) in {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}:
            raise InvalidCharacterName("character name contains a control or invisible character")
    return name
