"""Vector storage of an index: float32 rows for small pools, int8 rows plus a coarse projection for large."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from recall.engine.index import RecallIndex

EXACT_COSINE_ROWS = 20_000  # above this, cosine is coarse-then-exact (see RecallIndex.__init__)
COARSE_DIM = 64


class VectorBuilder:
    """Collects unit vectors row by row; small pools stay float32 (exact cosine), large ones become int8
    rows with a per-row scale plus a 64-d float32 projection for the coarse pass."""

    CHUNK = 4096

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.has = array("b")
        self._buffer = np.zeros((self.CHUNK, dim), dtype=np.float32) if dim else np.zeros((0, 0), np.float32)
        self._filled = 0
        self._exact: list[np.ndarray] = []  # float32 chunks, kept while the pool is small
        self._q8: list[np.ndarray] = []
        self._scale: list[np.ndarray] = []
        self.count = 0

    def append(self, vector: np.ndarray | None) -> None:
        ok = vector is not None and self.dim > 0 and vector.shape == (self.dim,)
        self.has.append(1 if ok else 0)
        if not self.dim:
            return
        if ok:
            self._buffer[self._filled] = vector
            self.count += 1
        else:
            self._buffer[self._filled] = 0.0
        self._filled += 1
        if self._filled == self.CHUNK:
            self._flush()

    def _flush(self) -> None:
        if not self._filled:
            return
        rows = self._buffer[: self._filled].copy()
        self._filled = 0
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        rows /= np.maximum(norms, 1e-12)
        if self.count <= EXACT_COSINE_ROWS:
            self._exact.append(rows)
        else:
            self._exact.clear()
        # int8 with a per-row scale: cosine error ≈ 1e-3, far below the gaps that decide a top-20.
        scale = np.maximum(np.abs(rows).max(axis=1), 1e-12) / 127.0
        self._q8.append(np.rint(rows / scale[:, None]).astype(np.int8))
        self._scale.append(scale.astype(np.float32))

    def build(self, index: RecallIndex) -> None:
        self._flush()
        self._buffer = np.zeros((0, 0), np.float32)
        n = len(self.has)
        index.has_vector = np.frombuffer(self.has, dtype=np.int8).astype(bool) if n else np.zeros(0, bool)
        if self.count <= EXACT_COSINE_ROWS:
            # No vector at all (an import, before the backfill): zeros stay untouched pages until filled.
            index.matrix = (
                with_room(np.concatenate(self._exact)) if self._exact else zeros_with_room(n, self.dim)
            )
            self._q8.clear()
            return
        q8, scale = np.concatenate(self._q8), np.concatenate(self._scale)
        self._q8.clear()
        self._scale.clear()
        _encode_large(index, q8, scale)


def _encode_large(index: RecallIndex, q8: np.ndarray, scale: np.ndarray) -> None:
    """Give ``index`` the large-pool encoding of its int8 rows: a 64-d projection and coarse rows."""
    n = q8.shape[0]
    # The top principal directions of a sample of the vectors.
    valid = np.flatnonzero(index.has_vector)
    sample = valid[:: max(1, valid.size // 20_000)]
    x = q8[sample].astype(np.float32) * scale[sample, None]
    # Right singular vectors of the sample = eigenvectors of its Gram matrix (dim × dim): ~50× faster.
    eigenvalues, eigenvectors = np.linalg.eigh((x.T @ x).astype(np.float64))
    top = np.argsort(eigenvalues)[::-1][:COARSE_DIM]
    projection = np.ascontiguousarray(eigenvectors[:, top].astype(np.float32))
    coarse = np.empty((n, projection.shape[1]), dtype=np.float32)
    for start in range(0, n, VectorBuilder.CHUNK):
        part = slice(start, start + VectorBuilder.CHUNK)
        coarse[part] = (q8[part].astype(np.float32) * scale[part, None]) @ projection
    # The coarse rows stay float32: one matrix-vector product a query (200k × 64: ~3 ms), where int8
    # rows widened block by block took twice that, for 38 MB more at 200k rows.
    index.projection = projection
    index.coarse = with_room(coarse)
    index.matrix = None
    index.q8, index.q8_scale = with_room(q8), with_room(scale)


def vectors_requantize(index: RecallIndex) -> bool:
    """Move an index still in float32 (exact cosine) to the int8 + coarse encoding once it holds more
    than ``EXACT_COSINE_ROWS`` vectors; True when it did.

    A build gives float32 only to a pool with few vectors, but an imported pool is built before the
    backfill embeds it, so its vectors arrive later, in place, into a float32 matrix of zeros: at
    200k rows that is 400 MB read by every query. The caller holds the index's lock.
    """
    if index.matrix is None or int(index.has_vector.sum()) <= EXACT_COSINE_ROWS:
        return False
    rows = index.matrix
    q8 = np.empty(rows.shape, dtype=np.int8)
    scale = np.empty(rows.shape[0], dtype=np.float32)
    for start in range(0, rows.shape[0], VectorBuilder.CHUNK):
        part = rows[start : start + VectorBuilder.CHUNK]
        part_scale = np.maximum(np.abs(part).max(axis=1), 1e-12) / 127.0
        q8[start : start + VectorBuilder.CHUNK] = np.rint(part / part_scale[:, None])
        scale[start : start + VectorBuilder.CHUNK] = part_scale
    _encode_large(index, q8, scale)
    return True


def unit_rows(vectors: Sequence[np.ndarray | None], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(k × dim float32 unit rows, has) for vectors arriving after a build; a missing or misshapen
    vector is a zero row with ``has`` False."""
    rows = np.zeros((len(vectors), dim), dtype=np.float32)
    has = np.zeros(len(vectors), dtype=bool)
    for i, vector in enumerate(vectors):
        if vector is None or not dim:
            continue
        flat = np.asarray(vector, dtype=np.float32).reshape(-1)
        if flat.shape == (dim,):
            rows[i] = flat / max(float(np.linalg.norm(flat)), 1e-12)
            has[i] = True
    return rows, has


def vectors_append(index: RecallIndex, rows: np.ndarray, has: np.ndarray) -> None:
    """Add the vectors of appended rows in the index's storage (float32, or int8 + coarse)."""
    index.has_vector = np.concatenate((index.has_vector, has))
    if index.matrix is not None:
        index.matrix = appended(index.matrix, rows)
        return
    q8, scale, coarse = _compact(index, rows)
    assert index.q8 is not None and index.q8_scale is not None and index.coarse is not None
    index.q8 = appended(index.q8, q8)
    index.q8_scale = appended(index.q8_scale, scale)
    index.coarse = appended(index.coarse, coarse)


def _spare_rows(n: int) -> int:
    # A 64th of the rows: a 100k-row matrix's next 1 562 facts. At least 128, not 1 024: a 2 000-row
    # character's matrix was half empty rows, and the recall cache keeps 512 of them (copying a small
    # matrix when its room runs out costs a millisecond).
    return max(128, n // 64)


def with_room(array: np.ndarray) -> np.ndarray:
    """``array`` as the front of a buffer with room for the next rows, so the first appends after a
    build or a load fill the spare rows instead of copying the whole matrix (100 MB at 200k rows)."""
    buffer = np.zeros((array.shape[0] + _spare_rows(array.shape[0]), *array.shape[1:]), dtype=array.dtype)
    buffer[: array.shape[0]] = array
    return buffer[: array.shape[0]]


def zeros_with_room(n: int, dim: int) -> np.ndarray:
    """An n × dim float32 matrix of zeros with spare rows, as ``with_room`` gives (never copied)."""
    return np.zeros((n + _spare_rows(n), dim), dtype=np.float32)[:n]


def held_nbytes(array: np.ndarray) -> int:
    """The bytes of the buffer ``array`` is the front of (its spare rows too), not just of its rows."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array.nbytes


def appended(array: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``array`` followed by ``rows``, as the front of a buffer with room to spare: a 100k × 512 matrix
    is 200 MB, and copying it for every new fact would cost a query far more than the fact."""
    n, k = array.shape[0], rows.shape[0]
    base = array.base
    if (
        isinstance(base, np.ndarray)
        and base.dtype == array.dtype
        and base.shape[1:] == array.shape[1:]
        and base.shape[0] >= n + k
        and base.__array_interface__["data"][0] == array.__array_interface__["data"][0]
        and array.flags.c_contiguous
    ):
        base[n : n + k] = rows
        return base[: n + k]
    buffer = np.zeros((max(n + k, n + n // 4 + _spare_rows(n)), *array.shape[1:]), dtype=array.dtype)
    buffer[:n] = array
    buffer[n : n + k] = rows
    return buffer[: n + k]


def vectors_set(index: RecallIndex, at: np.ndarray, rows: np.ndarray) -> None:
    """Fill the vectors of existing rows in place (the embedding backfill's new vectors)."""
    if not at.size:
        return
    index.has_vector[at] = True
    if index.matrix is not None:
        index.matrix[at] = rows
        return
    assert index.q8 is not None and index.q8_scale is not None and index.coarse is not None
    index.q8[at], index.q8_scale[at], index.coarse[at] = _compact(index, rows)


def _compact(index: RecallIndex, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit rows in the large-pool encoding: int8 with a per-row scale, and their coarse projection."""
    assert index.projection is not None
    scale = np.maximum(np.abs(rows).max(axis=1), 1e-12) / 127.0
    q8 = np.rint(rows / scale[:, None]).astype(np.int8)
    return q8, scale.astype(np.float32), (rows @ index.projection).astype(np.float32)
