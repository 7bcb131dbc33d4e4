"""``config/characters.json`` → the master's name, the characters and their cards (reference §12).

Pure reading here; ``install.sync`` applies the result to the Character rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MASTER_KEY = "主人"
CHARACTERS_KEY = "猫娘"
CURRENT_KEY = "当前猫娘"
MASTER_NAME_FIELD = "档案名"
DEFAULT_MASTER_NAME = "主人"
LIST_SEPARATOR = "、"
AI_CONTEXT_PREFIX = "__ai_context."

# Never card fields: the model, voice and file bookkeeping of the original's character editor.
RESERVED_FIELDS = frozenset(
    {
        "_reserved",
        "character_id",
        "live2d",
        "voice_id",
        "system_prompt",
        "model_type",
        "live3d_sub_type",
        "vrm",
        "vrm_animation",
        "lighting",
        "vrm_rotation",
        "live2d_item_id",
        "live2d_idle_animation",
        "item_id",
        "idleAnimation",
        "idleAnimations",
        "mmd",
        "mmd_animation",
        "mmd_idle_animation",
        "mmd_idle_animations",
        "touch_set",
        "_field_order",
        "原始数据",
        "文件路径",
        "创意工坊物品ID",
        "description",
        "tags",
        "name",
        "描述",
        "标签",
        "关键词",
    }
)


@dataclass(frozen=True)
class InstallCharacters:
    master_name: str
    master_card: dict[str, str]  # field → shown value, in card order
    cards: dict[str, dict[str, str]]  # character name → its card, in file order
    current: str | None
    skipped: list[str] = field(default_factory=list)  # entries of 猫娘 that are not objects


def card_value(value: Any) -> str | None:
    """The value a card field shows, or None when the field is not a card field (empty, dict, set)."""
    if isinstance(value, bool):
        shown = "true" if value else "false"
    elif isinstance(value, str):
        shown = value.strip()
    elif isinstance(value, int | float):
        shown = str(value)
    elif isinstance(value, list):
        shown = LIST_SEPARATOR.join(str(item).strip() for item in value if str(item).strip())
    else:  # dict, set, None
        return None
    return shown or None


def card_from_fields(
    fields: dict[str, Any], *, also_reserved: frozenset[str] = frozenset()
) -> dict[str, str]:
    card: dict[str, str] = {}
    for name, value in fields.items():
        if name in RESERVED_FIELDS or name in also_reserved:
            continue
        shown = card_value(value)
        if shown is not None:
            card[str(name)] = shown
    return card


def parse_characters(data: dict[str, Any]) -> InstallCharacters:
    """Read the file's object; a missing or malformed section counts as empty, never as an error."""
    master = data.get(MASTER_KEY)
    master = master if isinstance(master, dict) else {}
    master_name = master.get(MASTER_NAME_FIELD)
    master_name = master_name.strip() if isinstance(master_name, str) and master_name.strip() else None
    characters = data.get(CHARACTERS_KEY)
    characters = characters if isinstance(characters, dict) else {}
    cards: dict[str, dict[str, str]] = {}
    skipped: list[str] = []
    for name, fields in characters.items():
        if isinstance(fields, dict):
            cards[str(name)] = card_from_fields(fields)
        else:
            skipped.append(str(name))
    current = data.get(CURRENT_KEY)
    return InstallCharacters(
        master_name=master_name or DEFAULT_MASTER_NAME,
        master_card=card_from_fields(master, also_reserved=frozenset({MASTER_NAME_FIELD})),
        cards=cards,
        current=current if isinstance(current, str) and current else None,
        skipped=skipped,
    )


def character_card(install: InstallCharacters, name: str) -> dict[str, dict[str, str]]:
    """The ``Character.card`` shape: the master's fields, then the character's own."""
    card: dict[str, dict[str, str]] = {}
    if install.master_card:
        card["master"] = dict(install.master_card)
    own = install.cards.get(name) or {}
    if own:
        card["neko"] = dict(own)
    return card
