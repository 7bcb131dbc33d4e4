"""The character card as persona reads it: its fields in card order and its fingerprint (pure functions)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

# A card field whose value is context for the model, not a "field: value" fact (reference §12).
AI_CONTEXT_PREFIX = "__ai_context."
# The card's field order per entity, kept beside the fields: PostgreSQL's jsonb does not keep key order.
FIELD_ORDER_KEY = "_field_order"


def _ordered_fields(values: dict[str, Any], order: Any) -> list[tuple[str, Any]]:
    if not isinstance(order, list):
        return list(values.items())
    rank = {str(name): i for i, name in enumerate(order)}
    return sorted(values.items(), key=lambda item: rank.get(str(item[0]), len(rank)))


def card_fields(card: Any) -> list[tuple[str, str, str]]:
    """(entity, field, text) of every card field, in card order; the text reads ``field: value``
    (an ``__ai_context.*`` field: its value alone)."""
    fields = []
    card = card if isinstance(card, dict) else {}
    orders = card.get(FIELD_ORDER_KEY)
    orders = orders if isinstance(orders, dict) else {}
    for entity, values in card.items():
        if not isinstance(values, dict) or str(entity).startswith("_"):
            continue
        for field, value in _ordered_fields(values, orders.get(entity)):
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            if shown.strip():
                text = shown if str(field).startswith(AI_CONTEXT_PREFIX) else f"{field}: {shown}"
                fields.append((str(entity), str(field), text))
    return fields


def card_sha(card: Any) -> str:
    return hashlib.sha256(json.dumps(card or {}, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
