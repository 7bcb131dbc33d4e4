"""Stored vectors and their fingerprints, and cosine top-k: plain functions, no model needed."""

from __future__ import annotations

import numpy as np
import pytest

from nekomem.embeddings import cosine_top_k, decode_vector, encode_vector, text_fingerprint


def test_text_fingerprint_is_sha256_of_utf8_text() -> None:
    assert text_fingerprint("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert text_fingerprint("主人喜欢猫") != text_fingerprint("主人喜欢狗")


def test_encode_decode_round_trip_within_float16_precision() -> None:
    rng = np.random.default_rng(7)
    vec = rng.standard_normal(512).astype(np.float32)
    vec /= np.linalg.norm(vec)

    encoded = encode_vector(vec)
    decoded = decode_vector(encoded, 512)

    assert isinstance(encoded, str)
    assert len(encoded) == len("A" * ((512 * 2 + 2) // 3 * 4))  # base64 of 1024 bytes
    assert decoded is not None and decoded.dtype == np.float32
    np.testing.assert_allclose(decoded, vec, atol=1e-3, rtol=1e-3)
    assert decode_vector(encoded, 256) is None
    assert decode_vector(encoded, 768) is None


@pytest.mark.parametrize("bad", ["", None, "not base64!!", "AAA", encode_vector([np.inf] * 4)])
def test_decode_rejects_bad_input(bad: str | None) -> None:
    assert decode_vector(bad, 4) is None


def test_cosine_top_k_on_hand_made_vectors() -> None:
    matrix = np.array(
        [
            [1.0, 0.0, 0.0],  # 0: same direction as q1
            [0.0, 2.0, 0.0],  # 1: same direction as q2 (not unit length: cosine, not dot product)
            [1.0, 1.0, 0.0],  # 2: 0.707 to both
            [0.0, 0.0, 1.0],  # 3: orthogonal to both
            [-1.0, 0.0, 0.0],  # 4: opposite to q1
        ],
        dtype=np.float32,
    )
    q1, q2 = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])

    idx, scores = cosine_top_k(q1, matrix, k=3, threshold=-1.0)
    assert idx.tolist() == [0, 2, 1]
    np.testing.assert_allclose(scores, [1.0, 0.70710677, 0.0], atol=1e-6)

    # Several queries: a row scores its best cosine against any of them.
    idx, scores = cosine_top_k(np.vstack([q1, q2]), matrix, k=10, threshold=0.3)
    assert idx.tolist() == [0, 1, 2]
    np.testing.assert_allclose(scores, [1.0, 1.0, 0.70710677], atol=1e-6)

    idx, _ = cosine_top_k(q1, matrix, k=10, threshold=0.99)
    assert idx.tolist() == [0]
    assert cosine_top_k(q1, matrix[:0], k=5, threshold=0.0)[0].size == 0
    assert cosine_top_k(q1, matrix, k=0, threshold=0.0)[0].size == 0
    with pytest.raises(ValueError, match="dimension"):
        cosine_top_k(np.ones(4), matrix, k=1)
