"""What a server process does before it serves: it starts the model load and imports the URLconf, so
neither is paid inside the first requests after a start (bench/recall_freshness.py)."""

from __future__ import annotations

import sys

from django.urls import clear_url_caches, get_resolver

from nekomem import embeddings
from nekomem.embeddings import state
from nekomem.runtime import warmups
from tests.recall.support import require_muse


def test_the_model_load_starts_first_and_the_urlconf_is_imported_before_serving() -> None:
    order = warmups.before_serving_order()
    assert order[:2] == ["embedding-model", "urlconf"]
    assert order.index("urlconf") < order.index("recall-saved-indexes")
    # The model is waited for last, so its load overlaps every other warm-up before serving.
    assert order[-1] == "embedding-model-ready"
    assert "knowledge-query-log" in order  # an app registered after recall's still runs before the wait
    clear_url_caches()
    assert "url_patterns" not in get_resolver().__dict__  # imported lazily, by the first request
    warmups.urlconf_warm_up()
    assert "url_patterns" in get_resolver().__dict__
    assert "recall.views" in sys.modules


def test_starting_the_model_load_does_not_wait_for_it() -> None:
    require_muse()
    embeddings.reset_for_tests()
    try:
        warmups.start_model_load()
        service = state._service(None)
        loader = service._loader
        assert loader is not None  # loading on a thread of its own: the warm-up returned before it ends
        loader.join(timeout=120)
        assert service.state is state.EmbeddingState.READY
    finally:
        embeddings.reset_for_tests()


def test_a_worker_serves_with_the_model_loaded(settings) -> None:
    """A query in a worker's first seconds ranks with vectors without waiting for the model inside its
    request: the wait before serving ends with the model ready (issue 50)."""
    require_muse()
    embeddings.reset_for_tests()
    settings.EMBEDDING_LOAD_BEFORE_SERVING_SECONDS = 120.0
    try:
        warmups.start_model_load()
        assert warmups.model_load_wait() is True
        assert state._service(None).state is state.EmbeddingState.READY
        assert embeddings.embedder_within(0.0) is not None  # what a first query then finds at once
    finally:
        embeddings.reset_for_tests()


def test_the_wait_before_serving_is_bounded(settings) -> None:
    """A load that outlasts the bound does not keep the worker from serving: it serves, the load goes
    on, and a query waits for it at most ``RECALL_MODEL_WAIT_SECONDS``."""
    require_muse()
    embeddings.reset_for_tests()
    settings.EMBEDDING_LOAD_BEFORE_SERVING_SECONDS = 0.0
    try:
        warmups.start_model_load()
        service = state._service(None)
        ready = warmups.model_load_wait()
        assert ready is (service.state is state.EmbeddingState.READY)
        loader = service._loader
        assert loader is not None
        loader.join(timeout=120)
        assert service.state is state.EmbeddingState.READY
    finally:
        embeddings.reset_for_tests()
