"""Stored vectors and their fingerprints, and plain vector math (no model needed).

Stored vectors follow the original's format: ``base64(float16 bytes of the L2-normalised vector)``, valid
only while ``embedding_text_sha256`` and ``embedding_model_id`` both match (``vector_is_valid``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np


class VectorModel(Protocol):
    """What a stored vector is checked against (an ``Embedder``): no model is needed for it, so this
    module stays below the embedders, which import it."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...


def l2_normalise(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.maximum(norms, 1e-12)


def text_fingerprint(text: str) -> str:
    """sha256 hex of the UTF-8 text: the ``embedding_text_sha256`` stored with a vector."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def encode_vector(vec: np.ndarray | Sequence[float]) -> str:
    """base64 of the little-endian float16 bytes, as the original stores ``embedding``."""
    arr = np.asarray(vec, dtype=np.float32).reshape(-1)
    return base64.b64encode(arr.astype("<f2").tobytes()).decode("ascii")


def decode_vector(s: str | None, dim: int) -> np.ndarray | None:
    """The stored vector as float32, or None when it is missing, malformed or of another dimension."""
    if not s or not isinstance(s, str):
        return None
    try:
        raw = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) != dim * 2:
        return None
    arr = np.frombuffer(raw, dtype="<f2").astype(np.float32)
    if not np.isfinite(arr).all():
        return None
    return arr


def vector_is_valid(
    *,
    stored_vector: str | None,
    stored_text_sha256: str | None,
    stored_model_id: str | None,
    text: str,
    embedder: VectorModel,
) -> bool:
    """A cached vector counts only when text and model fingerprints match and its dimension fits."""
    return (
        stored_model_id == embedder.model_id
        and stored_text_sha256 == text_fingerprint(text)
        and decode_vector(stored_vector, embedder.dim) is not None
    )


def cosine_top_k(
    query_vecs: np.ndarray, matrix: np.ndarray, k: int, threshold: float = -1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``matrix`` most similar to the query, best first: (indices, scores).

    ``query_vecs`` may be one vector or several rows; a row's score is its best cosine against any of
    them. Only scores ``>= threshold`` are kept; ties keep the lower index first.
    """
    queries = np.atleast_2d(np.asarray(query_vecs, dtype=np.float32))
    rows = np.asarray(matrix, dtype=np.float32)
    if k <= 0 or rows.size == 0 or queries.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    rows = np.atleast_2d(rows)
    if rows.shape[1] != queries.shape[1]:
        raise ValueError(f"dimension mismatch: query {queries.shape[1]}, matrix {rows.shape[1]}")
    # Normalised here too: float16 storage leaves norms slightly off 1, and callers may pass raw vectors.
    scores = (l2_normalise(rows) @ l2_normalise(queries).T).max(axis=1)
    keep = np.flatnonzero(scores >= threshold)
    order = keep[np.lexsort((keep, -scores[keep]))][:k]
    return order.astype(np.int64), scores[order].astype(np.float32)
