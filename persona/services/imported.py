"""Persona candidates brought from another program's Markdown workspace (reference §1.4, §1.7).

Each entity's candidates are fused by the LLM into a few persona statements; there is never a
per-entry fallback: when the LLM cannot answer, that entity adds nothing and the caller reports a
partial import. A batch already fused for an entity (same candidate texts) is not fused again, so a
retry spends no LLM call on it and adds nothing twice."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from nekomem.characters.locks import lock_character
from nekomem.language.codes import normalize_language
from nekomem.language.counting import count_tokens
from nekomem.llm import chat_json
from persona.models import PersonaEntry
from persona.prompts import import_fuse_messages
from persona.services.entries import entry_add, persona_prepare
from persona.services.records import sha8

IMPORT_SOURCE = "external_import"
# Token caps of the fused text per entity and of one fusion's input (reference §1.4).
FUSED_TOKEN_CAPS = {"neko": 1000, "master": 600, "relationship": 600}
FUSION_INPUT_TOKEN_CAP = 6000
FUSION_TIMEOUT = 120.0


class FusionInputTooLarge(ValueError):
    """One entity's candidates exceed the fusion input cap."""


@dataclass
class FusedEntity:
    added: int = 0
    skipped_duplicates: int = 0
    already_fused: bool = False


def batch_key(texts: Sequence[str]) -> str:
    joined = "\n".join(sorted(t.strip() for t in texts))
    return "import:" + hashlib.sha256(joined.encode("utf-8")).hexdigest()[:24]


def fusion_input_check(*, texts: Sequence[str]) -> None:
    tokens = sum(count_tokens(t) for t in texts)
    if tokens > FUSION_INPUT_TOKEN_CAP:
        raise FusionInputTooLarge(f"{tokens} tokens of persona candidates; at most {FUSION_INPUT_TOKEN_CAP}")


def _fusion_messages(*, entity: str, texts: Sequence[str], language: str) -> list[dict[str, Any]]:
    return import_fuse_messages(
        entity=entity, cap=FUSED_TOKEN_CAPS.get(entity, 600), items=list(texts), language=language
    )


def _statements(value: list[object], *, cap: int) -> list[str]:
    kept: list[str] = []
    used = 0
    for item in value:
        if not isinstance(item, str) or not item.strip():
            continue
        cost = count_tokens(item)
        if used + cost > cap:
            break  # the cap holds: later statements are dropped, never the whole answer
        kept.append(item.strip())
        used += cost
    return kept


def persona_import_fuse(
    *,
    character_id: int,
    entity: str,
    texts: Sequence[str],
    language: str,
    now: datetime | None = None,
) -> FusedEntity:
    """Fuse one entity's imported candidates and add the statements. Raises the LLM's errors."""
    now = now or timezone.now()
    fusion_input_check(texts=texts)
    key = batch_key(texts)
    if PersonaEntry.objects.filter(character_id=character_id, source=IMPORT_SOURCE, source_id=key).exists():
        return FusedEntity(already_fused=True)
    reply = chat_json(
        tier="correction",
        messages=_fusion_messages(entity=entity, texts=texts, language=normalize_language(language)),
        expect=list,
        timeout=FUSION_TIMEOUT,
    )
    statements = _statements(reply, cap=FUSED_TOKEN_CAPS.get(entity, 600))
    result = FusedEntity()
    with transaction.atomic():
        character = lock_character(character_id)
        persona_prepare(character=character, now=now)
        section = PersonaEntry.objects.filter(character_id=character_id, section=entity)
        known = set(section.values_list("text", flat=True))
        for text in statements:
            if text in known:
                result.skipped_duplicates += 1
                continue
            entry_add(
                character=character,
                entity=entity,
                text=text,
                source=IMPORT_SOURCE,
                source_id=key,
                now=now,
                entry_id=f"import_{sha8(key + text)}",
                check_contradictions=False,
            )
            known.add(text)
            result.added += 1
    return result
