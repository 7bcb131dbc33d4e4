"""The public knowledge lookup of an MCP connection: the same service, and the same answer, as the
chat's ``POST /internal/knowledge/query`` (reference §1.8). The store is shared by every character
and is not memory: nothing the tool returns is stored, and it reads no character's memory."""

from __future__ import annotations

from typing import Any

from knowledge.services import knowledge_query
from mcp_server.memory import Connection
from nekomem.language.resolution import resolve_language

# The fields of the route's answer a model can use; ``card_ids`` and the timing are the chat server's.
ANSWER_FIELDS = ("result", "context", "hits", "retrieval_mode")


def query_public_knowledge(
    conn: Connection, *, query: str, mode: str, material_type: str, limit: int, language: str | None
) -> dict[str, Any]:
    character = conn.character()
    answer = knowledge_query(
        query=query,
        mode=mode,
        material_type=material_type,
        limit=limit,
        language=resolve_language(language, character.language if character is not None else None),
    )
    return {field: answer[field] for field in ANSWER_FIELDS}
