"""The process-wide model holder: INIT → LOADING → READY, or DISABLED for the rest of the process.

Vectors are optional (reference §6): every caller asks ``get_embedder()`` (or ``is_available()``) and
takes its degraded path (BM25 only, evidence order, no anchors) when it gets ``None``. DISABLED is
entered when ``settings.EMBEDDINGS_ENABLED`` is false, when the model files are missing or wrong, or
after any load or inference error (a model that failed once, e.g. an unsupported CPU instruction, is
not retried on the chat path).
"""

from __future__ import annotations

import enum
import functools
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from django.conf import settings

from nekomem.embeddings.embedders import Embedder, EmbeddingError
from nekomem.embeddings.onnx import EmbeddingUnavailable, trim_heap
from nekomem.embeddings.profiles import DEFAULT_PROFILE, get_profile

logger = logging.getLogger(__name__)


class VectorSpace(Protocol):
    """What a stored vector is checked against: a loaded model, or its profile while it loads."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...


class EmbeddingState(enum.StrEnum):
    INIT = "init"
    LOADING = "loading"
    READY = "ready"
    DISABLED = "disabled"


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
        self._settled = threading.Event()  # READY or DISABLED: waiting is over either way
        self._loader: threading.Thread | None = None
        self._loader_lock = threading.Lock()

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

    def get_within(self, timeout: float | None) -> Embedder | None:
        """The model if it is (or becomes) ready within ``timeout`` seconds, else None; a load not yet
        started starts on a thread of its own. ``None`` waits as long as the load takes."""
        if self.state is EmbeddingState.READY:
            return self._embedder
        if self.state is EmbeddingState.DISABLED:
            return None
        if timeout is None:
            return self.get()
        with self._loader_lock:
            if self._loader is None:
                self._loader = threading.Thread(target=self.get, name="embeddings-load", daemon=True)
                self._loader.start()
        self._settled.wait(timeout)
        return self._embedder if self.state is EmbeddingState.READY else None

    @property
    def space(self) -> VectorSpace | None:
        """The vectors this process uses or will use once loaded (None once DISABLED)."""
        return None if self.state is EmbeddingState.DISABLED else self.profile

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
        self._settled.set()
        logger.info("embeddings ready: %s in %.2fs", embedder.model_id, self.load_seconds)

    def disable(self, reason: str) -> None:
        if self.state is not EmbeddingState.DISABLED:
            logger.warning("embeddings disabled (%s): %s", self.profile.name, reason)
        self.state = EmbeddingState.DISABLED
        self.reason = reason
        self._embedder = None
        self._settled.set()

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


@functools.lru_cache(maxsize=64)
def _resolved(model_dir: str, cwd: str) -> str:
    return str(Path(cwd, model_dir).resolve())


def _service(profile: str | None) -> EmbeddingService:
    name = profile or configured_profile()
    # Keyed by directory too, so a different EMBEDDING_MODEL_DIR (tests, an override) gets its own state.
    # Its resolution is remembered: every query asks for the service twice, and resolving the path
    # (a system call per component) cost a /query_memory ~0.4 ms.
    key = (name, _resolved(str(settings.EMBEDDING_MODEL_DIR), os.getcwd()))
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


def embedder_within(timeout: float | None, profile: str | None = None) -> Embedder | None:
    """The loaded model, waiting for a load at most ``timeout`` seconds (None: as long as it takes)."""
    if not settings.EMBEDDINGS_ENABLED:
        return None
    return _service(profile).get_within(timeout)


def vector_space(profile: str | None = None) -> VectorSpace | None:
    """The model identity stored vectors are matched against, loaded or not (None: vectors are off).

    Callers that only read stored vectors (recall's index) use it while the model still loads.
    """
    if not settings.EMBEDDINGS_ENABLED:
        return None
    return _service(profile).space


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
    _resolved.cache_clear()
