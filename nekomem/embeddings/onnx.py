"""ONNX Runtime plumbing: session options, pinned-file checks, length batching, heap trimming."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings

from nekomem.embeddings.profiles import ModelProfile

# Per ONNX call, batch size × longest input stays under this many tokens (characters for the string
# graph), as in the original: padded batches of long texts otherwise take gigabytes.
TOKEN_BUDGET = 16384
# 16 texts a call embedded ~7% faster than 32 (and 64, 128 slower still) on the realistic fact texts
# of bench/recall_realistic.py, on 2 cores: less padding to each batch's longest string.
MAX_BATCH = 16


class EmbeddingUnavailable(Exception):
    """The model cannot be used: files missing or wrong, or vectors switched off."""


def default_threads() -> int:
    # Batches run on this many threads at once (each ONNX call on one core). Two fill a 2-core box;
    # more only adds contention with the web and task workers.
    configured = getattr(settings, "EMBEDDING_THREADS", None)
    if configured:
        return max(1, int(configured))
    return max(1, min(2, os.cpu_count() or 1))


def session_options() -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    # One thread per call. A single query (the chat path) is as fast on one thread as on two (~1 ms) and
    # never waits for a second thread the OS has parked; batches get the cores by running several calls
    # at once (``Embedder._run``), which measured ~5-10% faster than two intra-op threads per call.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    # Idle ORT threads otherwise spin-wait and burn a core the web workers need.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def check_files(model_dir: Path, profile: ModelProfile) -> Path:
    """The profile's directory, after checking every pinned file (so the model id tells the truth)."""
    from nekomem.embeddings.fetch import file_sha256

    directory = model_dir / profile.name
    for model_file in profile.files:
        path = directory / model_file.name
        if not path.is_file():
            raise EmbeddingUnavailable(f"missing {path} (run: python -m nekomem.embeddings.fetch)")
        if path.stat().st_size != model_file.size or file_sha256(path) != model_file.sha256:
            raise EmbeddingUnavailable(f"{path} does not match the pinned sha256 (re-run the fetch)")
    return directory


def trim_heap() -> None:
    """Hand freed heap pages back to the OS (glibc ``malloc_trim``; a no-op elsewhere).

    Loading the model or building a large recall index frees tens of MB of short-lived allocations
    that glibc otherwise keeps in the process; called after both.
    """
    global _libc
    if _libc is False:
        return
    try:
        if _libc is None:
            import ctypes

            _libc = ctypes.CDLL("libc.so.6")
        _libc.malloc_trim(0)
    except (OSError, AttributeError):
        _libc = False


_libc: Any = None


def batches_by_length(lengths: Sequence[int]) -> list[list[int]]:
    """Indices grouped by similar length (less padding) under ``TOKEN_BUDGET`` and ``MAX_BATCH``."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        longest = max(lengths[i], 1)
        if current and (len(current) >= MAX_BATCH or (len(current) + 1) * longest > TOKEN_BUDGET):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches
