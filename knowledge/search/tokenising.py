"""Rows tokenised for the knowledge index's BM25 view (the recall engine's ``Bm25View`` and tokeniser),
here or, for many rows, in a child process.

Tokenising is pure Python: on a thread of a server process it would hold the GIL for seconds and every
request of that process would queue behind it. A child process takes it off the server's interpreter
(spawned: a fork of a threaded server is not safe). The child is kept for a while after its work, so a
build soon after another (an import after the first lookup's build, the next import of a series) skips
its start (~1 s, more on a loaded machine), and it works at a lower priority than the server: on two
cores it would otherwise take a core from the requests for the seconds a large pack's rows take.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from recall.engine import LEXICAL_VIEWS, Bm25View, CountedRows

TOKENIZER = LEXICAL_VIEWS["words"]
# Rows from which tokenising goes to the child (its start costs ~1 s the first time).
OFFLOAD_ROWS = 1_000
CHILD_NICENESS = 10
CHILD_KEEP_SECONDS = 300.0

logger = logging.getLogger(__name__)
T = TypeVar("T")


def fresh_view(texts: list[str]) -> Bm25View:
    view = Bm25View(TOKENIZER, texts)
    view.freeze()
    return view


def counted_rows(texts: list[str]) -> list[tuple[dict[int, int], int]]:
    return Bm25View(TOKENIZER).counted(texts)


def counted_flat(texts: list[str]) -> CountedRows:
    return Bm25View(TOKENIZER).counted_flat(texts)


def tokenised(work: Callable[[list[str]], T], texts: list[str], offload_rows: int) -> T:
    """``work(texts)``, in the child process from ``offload_rows`` texts (here when it cannot start)."""
    if len(texts) < offload_rows:
        return work(texts)
    try:
        return _child.run(work, texts)
    except (OSError, BrokenProcessPool):
        logger.warning("knowledge index: no child process, tokenising here", exc_info=True)
        return work(texts)


def _child_started() -> None:
    """(In the child.) Behind the server's requests and the other work of the machine."""
    try:
        os.nice(CHILD_NICENESS)
    except OSError:
        logger.debug("knowledge index: the tokenising child keeps its priority", exc_info=True)


class _Child:
    """One spawned worker process, started on first use and ended ``CHILD_KEEP_SECONDS`` after its last."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._busy = 0
        self._retire_timer: threading.Timer | None = None

    def run(self, work: Callable[[list[str]], T], texts: list[str]) -> T:
        with self._lock:
            if self._retire_timer is not None:
                self._retire_timer.cancel()
                self._retire_timer = None
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_child_started
                )
            pool = self._pool
            self._busy += 1
        try:
            return pool.submit(work, texts).result()
        except BrokenProcessPool:
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            raise
        finally:
            with self._lock:
                self._busy -= 1
                if self._busy == 0 and self._pool is not None:
                    self._retire_timer = threading.Timer(CHILD_KEEP_SECONDS, self._retire)
                    self._retire_timer.daemon = True
                    self._retire_timer.start()

    def _retire(self) -> None:
        with self._lock:
            pool = self._pool if self._busy == 0 else None
            if pool is not None:
                self._pool = None
        if pool is not None:
            pool.shutdown(wait=False)


_child = _Child()
