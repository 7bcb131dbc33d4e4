"""Search over the public knowledge packs (reference §1.8): chunking at import, the index, the lookup and
its answer block. Plain code over the records of ``knowledge.search.types``; it knows no model."""

from knowledge.search.chunking import MAX_CHARS, MAX_CHUNKS, MAX_EMBED_CHARS, chunk_embed_text, entry_chunks
from knowledge.search.index import KnowledgeIndex, Ranked, build_index
from knowledge.search.index_cache import (
    knowledge_index_forget,
    knowledge_index_refresh,
    knowledge_index_settle,
    knowledge_index_version,
    knowledge_index_watch,
)
from knowledge.search.lookup import LookupOutcome, knowledge_lookup
from knowledge.search.render import Card, render_block
from knowledge.search.text import neutralize_fence, strip_chat_markup
from knowledge.search.types import SearchChunk, SearchEntry

__all__ = [
    "MAX_CHARS",
    "MAX_CHUNKS",
    "MAX_EMBED_CHARS",
    "Card",
    "KnowledgeIndex",
    "LookupOutcome",
    "Ranked",
    "SearchChunk",
    "SearchEntry",
    "build_index",
    "chunk_embed_text",
    "entry_chunks",
    "knowledge_index_forget",
    "knowledge_index_refresh",
    "knowledge_index_settle",
    "knowledge_index_version",
    "knowledge_index_watch",
    "knowledge_lookup",
    "neutralize_fence",
    "render_block",
    "strip_chat_markup",
]
