"""Local text embeddings (ONNX Runtime, CPU), their fingerprints, and vector helpers.

Vectors are optional (reference §6): every caller asks ``get_embedder()`` (or ``is_available()``) and
takes its degraded path (BM25 only, evidence order, no anchors) when it gets ``None``.

One lazily loaded service per (profile, model directory) per process, with the states
INIT → LOADING → READY, plus DISABLED. DISABLED is permanent for the process: it is entered when
``settings.EMBEDDINGS_ENABLED`` is false, when the model files are missing or wrong, or after any load or
inference error (a model that failed once, e.g. an unsupported CPU instruction, is not retried on the
chat path).

Stored vectors follow the original's format: ``base64(float16 bytes of the L2-normalised vector)``, valid
only while ``embedding_text_sha256`` and ``embedding_model_id`` both match (``vector_is_valid``).
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

from nekomem.embeddings.profiles import DEFAULT_PROFILE, PROFILES, ModelProfile, get_profile, leaf_profiles

logger = logging.getLogger(__name__)

# Per ONNX call, batch size × longest input stays under this many tokens (characters for the string
# graph), as in the original: padded batches of long texts otherwise take gigabytes.
TOKEN_BUDGET = 16384
MAX_BATCH = 32


class EmbeddingState(enum.StrEnum):
    INIT = "init"
    LOADING = "loading"
    READY = "ready"
    DISABLED = "disabled"


class EmbeddingUnavailable(Exception):
    """The model cannot be used: files missing or wrong, or vectors switched off."""


class EmbeddingError(Exception):
    """Loading or inference failed; the service is DISABLED for the rest of the process."""


def _default_threads() -> int:
    # Batches run on this many threads at once (each ONNX call on one core). Two fill a 2-core box;
    # more only adds contention with the web and task workers.
    configured = getattr(settings, "EMBEDDING_THREADS", None)
    if configured:
        return max(1, int(configured))
    return max(1, min(2, os.cpu_count() or 1))


def _session_options() -> Any:
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


def _check_files(model_dir: Path, profile: ModelProfile) -> Path:
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


def _clean(text: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"embed() takes strings, got {type(text).__name__}")
    # Lone surrogates cannot be encoded to UTF-8 and would fail the ONNX call (and disable vectors).
    return text.encode("utf-8", "replace").decode("utf-8")


def _batches(lengths: Sequence[int]) -> list[list[int]]:
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


def _l2_normalise(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.maximum(norms, 1e-12)


QUERY_CACHE_SIZE = 512  # recent query vectors kept per loaded model (``embed_query``)


class Embedder:
    """A loaded model. ``embed`` is thread-safe: ONNX Runtime sessions accept concurrent calls, so
    concurrent requests each run their own call, and one large ``embed`` spreads its batches over
    ``threads`` calls at once."""

    def __init__(self, profile: ModelProfile, threads: int = 1) -> None:
        self.profile = profile
        self.model_id = profile.model_id
        self.dim = profile.dim
        self.threads = max(1, threads)
        self._failed: str | None = None
        self._on_failure: Callable[[str], None] | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0
        self._pool_lock = threading.Lock()
        # Query vectors by text. Per instance, so a different model (or a reload) never sees them.
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries_lock = threading.Lock()

    @classmethod
    def load(
        cls, profile: str | ModelProfile, model_dir: Path | str, *, threads: int | None = None
    ) -> Embedder:
        """Load a profile from ``model_dir`` (no singleton). Raises EmbeddingUnavailable / EmbeddingError."""
        spec = get_profile(profile) if isinstance(profile, str) else profile
        model_dir = Path(model_dir)
        threads = threads or _default_threads()
        if spec.kind == "fused":
            parts = [cls.load(leaf, model_dir, threads=threads) for leaf in leaf_profiles(spec)]
            embedder: Embedder = FusedEmbedder(spec, parts)
        else:
            directory = _check_files(model_dir, spec)
            try:
                embedder = _KINDS[spec.kind](spec, directory, threads)
            except EmbeddingUnavailable:
                raise
            except Exception as exc:  # onnxruntime raises several unrelated types
                raise EmbeddingError(f"loading {spec.name} failed: {exc}") from exc
        # A probe catches a wrong graph or a broken runtime here rather than on the first real request.
        probe = embedder.embed(["nekomem"])
        if probe.shape != (1, spec.dim):
            raise EmbeddingError(f"{spec.name} returned shape {probe.shape}, expected (1, {spec.dim})")
        return embedder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 rows, one per text, in input order."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of strings, not a string")
        cleaned = [_clean(t) for t in texts]
        if not cleaned:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._failed:
            raise EmbeddingError(f"{self.profile.name} is disabled: {self._failed}")
        try:
            vectors = self._embed(cleaned)
            if vectors.shape != (len(cleaned), self.dim) or not np.isfinite(vectors).all():
                raise EmbeddingError(f"{self.profile.name} produced invalid output {vectors.shape}")
        except Exception as exc:
            reason = f"inference failed: {exc}"
            self._failed = reason
            if self._on_failure is not None:
                self._on_failure(reason)
            if isinstance(exc, EmbeddingError):
                raise
            raise EmbeddingError(reason) from exc
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        """``embed([text])[0]``, remembered: a repeated query costs a dictionary lookup. Read-only."""
        with self._queries_lock:
            cached = self._queries.get(text)
            if cached is not None:
                self._queries.move_to_end(text)
                return cached
        vector = self.embed([text])[0]
        vector.flags.writeable = False
        with self._queries_lock:
            self._queries[text] = vector
            while len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vector

    def _embed(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _run(self, batches: list[list[int]], run: Callable[[list[int]], None]) -> None:
        """``run`` every batch: inline when there is one (or one thread), else on the batch pool."""
        if len(batches) <= 1 or self.threads <= 1:
            for batch in batches:
                run(batch)
            return
        with self._pool_lock:
            # A pool inherited through fork has no threads in the child: make a new one there.
            if self._pool is None or self._pool_pid != os.getpid():
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix=f"embed-{self.profile.name}")
                self._pool_pid = os.getpid()
            pool = self._pool
        list(pool.map(run, batches))  # re-raises the first failure


class StringGraphEmbedder(Embedder):
    """A graph with its own tokeniser op (onnxruntime-extensions): strings in, vectors out."""

    def __init__(self, profile: ModelProfile, directory: Path, threads: int) -> None:
        super().__init__(profile, threads)
        import onnxruntime as ort
        from onnxruntime_extensions import get_library_path

        options = _session_options()
        options.register_custom_ops_library(get_library_path())
        self._session = ort.InferenceSession(
            str(directory / "model.onnx"), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._input = self._session.get_inputs()[0].name
        self._output = self._session.get_outputs()[0].name

    def _embed(self, texts: list[str]) -> np.ndarray:
        limit = self.profile.max_length
        texts = [t[:limit] for t in texts]
        out = np.empty((len(texts), self.dim), dtype=np.float32)

        def run(batch: list[int]) -> None:
            feed = np.array([texts[i] for i in batch], dtype=object)
            (vectors,) = self._session.run([self._output], {self._input: feed})
            out[batch] = vectors

        self._run(_batches([len(t) for t in texts]), run)
        return _l2_normalise(out)


class WordPieceEmbedder(Embedder):
    """A BERT-style encoder: `tokenizers` ids → last hidden state → mean pooling over real tokens → L2."""

    def __init__(self, profile: ModelProfile, directory: Path, threads: int) -> None:
        super().__init__(profile, threads)
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=profile.max_length)
        tokenizer.no_padding()  # padded per batch below, to the batch's own longest text
        self._tokenizer = tokenizer
        self._session = ort.InferenceSession(
            str(directory / "model.onnx"),
            sess_options=_session_options(),
            providers=["CPUExecutionProvider"],
        )
        self._inputs = {i.name for i in self._session.get_inputs()}

    def _embed(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)

        def run(batch: list[int]) -> None:
            width = max(len(encodings[i].ids) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feeds)[0]
            weights = mask[..., None].astype(np.float32)
            out[batch] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)

        self._run(_batches([len(e.ids) for e in encodings]), run)
        return _l2_normalise(out)


class FusedEmbedder(Embedder):
    """Concatenated unit vectors scaled by 1/√n: dot products are the mean of the parts' cosines."""

    def __init__(self, profile: ModelProfile, parts: list[Embedder]) -> None:
        super().__init__(profile)
        self.parts = parts

    def _embed(self, texts: list[str]) -> np.ndarray:
        scale = np.float32(1.0 / np.sqrt(len(self.parts)))
        return np.concatenate([p.embed(texts) * scale for p in self.parts], axis=1)


_KINDS: dict[str, Callable[[ModelProfile, Path, int], Embedder]] = {
    "string-graph": StringGraphEmbedder,
    "wordpiece": WordPieceEmbedder,
}


class EmbeddingService:
    """The lazy, process-wide holder of one profile's model in one directory."""

    def __init__(self, profile: str, model_dir: Path) -> None:
        self.profile = get_profile(profile)
        self.model_dir = model_dir
        self.state = EmbeddingState.INIT
        self.reason = ""
        self.load_seconds: float | None = None
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()

    def get(self, *, wait: bool = True) -> Embedder | None:
        if self.state is EmbeddingState.READY:
            return self._embedder
        if self.state is EmbeddingState.DISABLED:
            return None
        if not self._lock.acquire(blocking=wait):
            return None  # another thread is loading and the caller cannot wait
        try:
            if self.state in (EmbeddingState.INIT, EmbeddingState.LOADING):
                self._load()
            return self._embedder
        finally:
            self._lock.release()

    def _load(self) -> None:
        self.state = EmbeddingState.LOADING
        started = time.monotonic()
        try:
            embedder = Embedder.load(self.profile, self.model_dir)
        except (EmbeddingUnavailable, EmbeddingError) as exc:
            self.disable(str(exc))
            return
        except Exception as exc:  # any other load failure also turns vectors off, never the server
            self.disable(f"loading failed: {exc!r}")
            return
        embedder._on_failure = self.disable
        trim_heap()  # the graph's load-time copies (~35 MB)
        self._embedder = embedder
        self.load_seconds = time.monotonic() - started
        self.state = EmbeddingState.READY
        logger.info("embeddings ready: %s in %.2fs", embedder.model_id, self.load_seconds)

    def disable(self, reason: str) -> None:
        if self.state is not EmbeddingState.DISABLED:
            logger.warning("embeddings disabled (%s): %s", self.profile.name, reason)
        self.state = EmbeddingState.DISABLED
        self.reason = reason
        self._embedder = None

    def status(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "profile": self.profile.name,
            "state": str(self.state),
            "model_id": self.profile.model_id,
            "dim": self.profile.dim,
            "model_dir": str(self.model_dir),
            "reason": self.reason,
            "load_seconds": self.load_seconds,
        }


_services: dict[tuple[str, str], EmbeddingService] = {}
_services_lock = threading.Lock()


def configured_profile() -> str:
    return getattr(settings, "EMBEDDING_PROFILE", None) or DEFAULT_PROFILE


def _service(profile: str | None) -> EmbeddingService:
    name = profile or configured_profile()
    # Keyed by directory too, so a different EMBEDDING_MODEL_DIR (tests, an override) gets its own state.
    key = (name, str(Path(settings.EMBEDDING_MODEL_DIR).resolve()))
    with _services_lock:
        service = _services.get(key)
        if service is None:
            service = _services[key] = EmbeddingService(name, Path(key[1]))
        return service


def get_embedder(profile: str | None = None, *, wait: bool = True) -> Embedder | None:
    """The loaded model (loading it on first use), or None when vectors are unavailable.

    ``wait=False`` returns None instead of blocking while another thread loads the model.
    """
    if not settings.EMBEDDINGS_ENABLED:
        return None
    return _service(profile).get(wait=wait)


def is_available(profile: str | None = None, *, load: bool = True) -> bool:
    """Whether vectors can be used now; with ``load=False`` it never triggers a load."""
    if not settings.EMBEDDINGS_ENABLED:
        return False
    if load:
        return get_embedder(profile) is not None
    return _service(profile).state is EmbeddingState.READY


def warm_up(profile: str | None = None) -> bool:
    """Load the model now (the warm-up worker calls this off the request path)."""
    return get_embedder(profile) is not None


def embed_texts(texts: Sequence[str], profile: str | None = None) -> np.ndarray | None:
    """``embed`` for callers with a degraded path: None when unavailable or when inference fails."""
    embedder = get_embedder(profile)
    if embedder is None:
        return None
    try:
        return embedder.embed(texts)
    except EmbeddingError:
        return None


def status(profile: str | None = None) -> dict[str, Any]:
    """For health and admin pages; never loads the model."""
    if not settings.EMBEDDINGS_ENABLED:
        spec = get_profile(profile or configured_profile())
        return {
            "enabled": False,
            "profile": spec.name,
            "state": str(EmbeddingState.DISABLED),
            "model_id": spec.model_id,
            "dim": spec.dim,
            "model_dir": str(settings.EMBEDDING_MODEL_DIR),
            "reason": "disabled by NEKOMEM_EMBEDDINGS",
            "load_seconds": None,
        }
    return _service(profile).status()


def reset_for_tests() -> None:
    """Forget every loaded model and DISABLED state (a real restart does the same)."""
    with _services_lock:
        _services.clear()


# --- fingerprints and stored vectors -------------------------------------------------------------


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
    embedder: Embedder,
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
    scores = (_l2_normalise(rows) @ _l2_normalise(queries).T).max(axis=1)
    keep = np.flatnonzero(scores >= threshold)
    order = keep[np.lexsort((keep, -scores[keep]))][:k]
    return order.astype(np.int64), scores[order].astype(np.float32)


__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "Embedder",
    "EmbeddingError",
    "EmbeddingService",
    "EmbeddingState",
    "EmbeddingUnavailable",
    "configured_profile",
    "cosine_top_k",
    "decode_vector",
    "embed_texts",
    "encode_vector",
    "get_embedder",
    "is_available",
    "reset_for_tests",
    "status",
    "text_fingerprint",
    "trim_heap",
    "vector_is_valid",
    "warm_up",
]
