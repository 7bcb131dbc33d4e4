"""Local text embeddings: optional vectors for recall, dedup and reranking. Import from here.

- ``state``: the process-wide model holder and its states; ``get_embedder``, ``embed_texts``, ``status``.
- ``embedders``: loaded models, one class per ONNX graph kind, plus the fused profile.
- ``onnx``: ONNX Runtime session options, pinned-file checks, length batching, heap trimming.
- ``vectors``: stored-vector encoding, fingerprints and cosine top-k (no model needed).
- ``profiles`` and ``fetch``: the pinned model files and their set-up.
"""

from nekomem.embeddings.embedders import Embedder, EmbeddingError
from nekomem.embeddings.onnx import EmbeddingUnavailable, trim_heap
from nekomem.embeddings.profiles import DEFAULT_PROFILE, PROFILES
from nekomem.embeddings.state import (
    EmbeddingService,
    EmbeddingState,
    VectorSpace,
    configured_profile,
    embed_texts,
    embedder_within,
    get_embedder,
    is_available,
    reset_for_tests,
    status,
    vector_space,
    warm_up,
)
from nekomem.embeddings.vectors import (
    cosine_top_k,
    decode_vector,
    encode_vector,
    text_fingerprint,
    vector_is_valid,
)

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "Embedder",
    "EmbeddingError",
    "EmbeddingService",
    "EmbeddingState",
    "EmbeddingUnavailable",
    "VectorSpace",
    "configured_profile",
    "cosine_top_k",
    "decode_vector",
    "embed_texts",
    "embedder_within",
    "encode_vector",
    "get_embedder",
    "is_available",
    "reset_for_tests",
    "status",
    "text_fingerprint",
    "trim_heap",
    "vector_is_valid",
    "vector_space",
    "warm_up",
]
