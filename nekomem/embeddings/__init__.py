"""Local text embeddings: optional vectors for recall, dedup and reranking (see ``service``)."""

from nekomem.embeddings.service import (
    DEFAULT_PROFILE,
    Embedder,
    EmbeddingError,
    EmbeddingState,
    EmbeddingUnavailable,
    cosine_top_k,
    decode_vector,
    embed_texts,
    encode_vector,
    get_embedder,
    is_available,
    status,
    text_fingerprint,
    vector_is_valid,
)

__all__ = [
    "DEFAULT_PROFILE",
    "Embedder",
    "EmbeddingError",
    "EmbeddingState",
    "EmbeddingUnavailable",
    "cosine_top_k",
    "decode_vector",
    "embed_texts",
    "encode_vector",
    "get_embedder",
    "is_available",
    "status",
    "text_fingerprint",
    "vector_is_valid",
]
