"""Stored vectors written straight into rows, in the current vector space, for code that only reads
stored vectors (refine's clusters): no model is loaded."""

from __future__ import annotations

from typing import Any

import numpy as np

from nekomem.embeddings import encode_vector, text_fingerprint, vector_space


def axis(k: int, wobble: float = 0.0) -> np.ndarray:
    """Unit direction ``k`` of the space, tilted by ``wobble`` towards its last direction: two axes
    are unrelated (cosine 0); the same axis with small wobbles is near-identical (cosine > 0.95)."""
    space = vector_space()
    assert space is not None, "vectors are off in this test run"
    v = np.zeros(space.dim, dtype=np.float32)
    v[k] = 1.0
    v[space.dim - 1] += wobble
    return v


def store_vector(row: Any, vector: np.ndarray) -> Any:
    """Give ``row`` (a fact, reflection or persona entry) ``vector`` as its valid cached embedding."""
    space = vector_space()
    assert space is not None
    row.embedding = encode_vector(vector)
    row.embedding_text_sha256 = text_fingerprint(row.text)
    row.embedding_model_id = space.model_id
    row.save(update_fields=["embedding", "embedding_text_sha256", "embedding_model_id"])
    return row
