"""The knowledge store's frame: refusals, the store lock and its transaction, the version that
moves with every change, and who hears of it (the index of this process, the install folder)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import transaction
from django.db.models import F

from knowledge import search_selectors, selectors
from knowledge.models import KnowledgeStore
from knowledge.search import knowledge_index_refresh
from nekomem.characters.locks import store_lock

logger = logging.getLogger(__name__)


WRITE_WAIT_SECONDS = 5.0
# The switch of a finished build waits for user writes rather than failing the import.
SWITCH_WAIT_SECONDS = 120.0


class KnowledgeRefused(Exception):
    """A refused operation: answered ``200 {ok: false, reason}``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_change_listeners: list[Callable[[], None]] = []


def register_knowledge_change_listener(listener: Callable[[], None]) -> None:
    """Call ``listener`` after every committed change of the store (the install folder's writer)."""
    if listener not in _change_listeners:
        _change_listeners.append(listener)


def unregister_knowledge_change_listener(listener: Callable[[], None]) -> None:
    if listener in _change_listeners:
        _change_listeners.remove(listener)


def _index_refresh() -> None:
    """A process that answers lookups builds its own change now, so its next lookup sees it."""
    try:
        knowledge_index_refresh(
            entries_version=selectors.knowledge_store_version(),
            load_entries=search_selectors.knowledge_search_source,
            serving_only=True,
        )
    except Exception:
        logger.warning("knowledge index refresh failed", exc_info=True)


# Set while many changes are made in a row (an install folder taken in): the index is rebuilt once at
# the end rather than after each pack.
_refresh_deferred: ContextVar[list[bool] | None] = ContextVar("knowledge_refresh_deferred", default=None)


@contextmanager
def index_refresh_deferred() -> Iterator[None]:
    """Changes inside leave the index alone; it is refreshed once on the way out if any was made."""
    if _refresh_deferred.get() is not None:
        yield
        return
    changed: list[bool] = []
    token = _refresh_deferred.set(changed)
    try:
        yield
    finally:
        _refresh_deferred.reset(token)
        if changed:
            _index_refresh()


def store_changed(*, vectors_only: bool = False) -> None:
    """Inside the write's transaction: the store's version moves, and listeners run on commit.

    ``vectors_only``: the background fill stored vectors. Only its part of the version moves, which a
    lookup may lag behind, and the fill's worker builds no index: the processes that serve lookups do."""
    selectors.knowledge_store()
    if vectors_only:
        KnowledgeStore.objects.filter(pk=1).update(vectors_version=F("vectors_version") + 1)
    else:
        KnowledgeStore.objects.filter(pk=1).update(version=F("version") + 1)
    refresh_index = not vectors_only

    def notify() -> None:
        deferred = _refresh_deferred.get()
        if refresh_index and deferred is not None:
            deferred.append(True)
        elif refresh_index:
            _index_refresh()
        for listener in list(_change_listeners):
            try:
                listener()
            except Exception:
                logger.exception("knowledge change listener failed")

    transaction.on_commit(notify)


def require_ready() -> None:
    if not selectors.knowledge_ready():
        raise KnowledgeRefused("knowledge_starting")


@contextmanager
def store_write(*, wait: float = WRITE_WAIT_SECONDS, background: bool = False) -> Iterator[None]:
    """The store's lock and one transaction, or ``knowledge_busy`` after ``wait`` seconds.
    ``background``: a job in the task cluster, whose process never runs the server's startup (so it is
    never "ready"); a ready server accepted the job, and the storage gate still applies to it."""
    if not background:
        require_ready()
    with store_lock("knowledge", timeout=wait) as held:
        if not held:
            raise KnowledgeRefused("knowledge_busy")
        with transaction.atomic():
            yield
