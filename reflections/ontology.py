"""Ontology of a reflection (reference §2.7): relation type per entity, temporal scope, subject.

Pure functions. An invalid combination, or a text over 150 tokens, clears all three fields; the text
itself is always kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nekomem.language.counting import count_tokens

RELATION_TYPES: dict[str, frozenset[str]] = {
    "master": frozenset({"preference", "trait", "habit", "identity", "emotional", "boundary"}),
    "neko": frozenset({"self_awareness", "learned", "role_note"}),
    "relationship": frozenset({"dynamic", "milestone", "tension", "shared_memory", "agreement"}),
}
TEMPORAL_SCOPES = frozenset({"pattern", "state", "episode", "past"})
# Old files spell two scopes differently; both mean an ongoing state.
LEGACY_SCOPES = {"current": "state", "ongoing": "state"}
MAX_ONTOLOGY_TEXT_TOKENS = 150


@dataclass(frozen=True)
class Ontology:
    relation_type: str | None = None
    temporal_scope: str | None = None
    subject: str | None = None


NONE = Ontology()


def ontology_validated(
    *, text: str, entity: str, relation_type: Any, temporal_scope: Any, subject: Any
) -> Ontology:
    """The three fields when they are all valid for ``entity``, else all None."""
    if count_tokens(text) > MAX_ONTOLOGY_TEXT_TOKENS:
        return NONE
    if not isinstance(relation_type, str) or relation_type not in RELATION_TYPES.get(entity, frozenset()):
        return NONE
    scope = LEGACY_SCOPES.get(temporal_scope, temporal_scope) if isinstance(temporal_scope, str) else None
    if scope not in TEMPORAL_SCOPES:
        return NONE
    if subject is not None and not isinstance(subject, str):
        return NONE
    return Ontology(relation_type=relation_type, temporal_scope=scope, subject=(subject or None))
