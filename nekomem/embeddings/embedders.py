"""Loaded models: one ``Embedder`` per ONNX graph kind, and the fused profile over several."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from nekomem.embeddings.onnx import (
    EmbeddingUnavailable,
    batches_by_length,
    check_files,
    default_threads,
    session_options,
)
from nekomem.embeddings.profiles import ModelProfile, get_profile, leaf_profiles
from nekomem.embeddings.vectors import l2_normalise


class EmbeddingError(Exception):
    """Loading or inference failed; the service is DISABLED for the rest of the process."""


def _clean(text: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"embed() takes strings, got {type(text).__name__}")
    # Lone surrogates cannot be encoded to UTF-8 and would fail the ONNX call (and disable vectors).
    return text.encode("utf-8", "replace").decode("utf-8")


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
        threads = threads or default_threads()
        if spec.kind == "fused":
            parts = [cls.load(leaf, model_dir, threads=threads) for leaf in leaf_profiles(spec)]
            embedder: Embedder = FusedEmbedder(spec, parts)
        else:
            directory = check_files(model_dir, spec)
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

        options = session_options()
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

        self._run(batches_by_length([len(t) for t in texts]), run)
        return l2_normalise(out)


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
            sess_options=session_options(),
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

        self._run(batches_by_length([len(e.ids) for e in encodings]), run)
        return l2_normalise(out)


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
