"""The process's knowledge index: the first build, the background rebuild on a newer store version, the
version poll on a shared store, and forgetting it all (tests, a reload)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager

from knowledge.search.index import KnowledgeIndex, build_index
from knowledge.search.snapshot import Snapshot, read_for_build
from knowledge.search.types import SearchEntry, StoredRowsSource
from nekomem import embeddings
from nekomem.runtime.foreground import foreground_wait
from nekomem.runtime.long_lived import long_lived_build

logger = logging.getLogger(__name__)

# How often a process that serves lookups asks the store for its version when it is shared by several
# servers (PostgreSQL): another server's change is then seen within a poll plus a build.
POLL_SECONDS = 0.5
# How long ``knowledge_index_forget`` waits for the builder and the poller to stop.
STOP_SECONDS = 10.0
# A background build runs behind the requests of its process: between slices of its work (a fraction
# of a millisecond each) it waits for none to be under way, at most this long a slice. Longer than a
# /query_memory call (3–6 ms p95) and a lookup (14–19 ms p95), so a build works in the gaps between a
# server's requests and shares the interpreter with one only when it outlasts the wait or the requests
# leave no gap. At 3 ms the build ran inside most calls: during an import, /query_memory p95 read +78 %
# and +102 % over at rest on PostgreSQL; at 20 ms, +7 % and +10 % (SQLite: +6 to +16 % at 3 ms, +3 and
# +11 % at 20 ms; bench/knowledge_speed.py, a turn every 50 ms). The cost falls on a server answering
# back to back with no gap at all (the bench's own client): it takes the 5 000-entry pack in after
# ~19 s instead of ~10.
PAUSE_SECONDS = 0.02


def _version_key(version: str) -> tuple[int, ...] | None:
    """``"<entries>#<vectors>"`` as numbers, to tell an older version from a newer one; None for a
    version of another form (any other version then counts as newer)."""
    try:
        return tuple(int(part) for part in version.split("#"))
    except ValueError:
        return None


def _newer(version: str, than: str) -> bool:
    """Whether ``version`` is another version than ``than`` and not known to be older."""
    if version == than:
        return False
    mine, theirs = _version_key(version), _version_key(than)
    return mine is None or theirs is None or mine > theirs


def _older(version: str, than: str) -> bool:
    mine, theirs = _version_key(version), _version_key(than)
    return mine is not None and theirs is not None and mine < theirs


class _First:
    """The process's first build, which lookups wait for (within their budget): there is nothing older
    to answer from."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.index: KnowledgeIndex | None = None
        self.error: BaseException | None = None


class _IndexCache:
    """The index lookups answer from, and at most one build at a time that replaces it.

    Once a process has an index, no lookup waits for another: a lookup that reads a newer version
    hands it to the background builder and answers from the index it has; the builder reads the
    entries on its own connection, builds the new index from the current one and switches to it in one
    assignment. A write of this process builds its change in its own time (``refresh``), so its next
    lookup sees it; a server sharing the store with others also polls the version (``watch``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()  # one build at a time, whoever runs it
        self._current: KnowledgeIndex | None = None
        self._snapshot: Snapshot | None = None  # what ``_current`` was built from, when known
        self._first: _First | None = None
        self._wanted: tuple[str, Callable[[], Iterable[SearchEntry]]] | None = None
        self._builder: threading.Thread | None = None
        self._generation = 0  # moves on ``clear``: a build begun before it is dropped
        self._source: tuple[Callable[[], str], Callable[[], Iterable[SearchEntry]]] | None = None
        self._poller: threading.Thread | None = None
        self._stop = threading.Event()
        self.builds = 0  # indexes built by this process (tests: a take-in builds one, not one a pack)
        self.entries_read = 0  # entries read from the store for them (tests: only the changed packs')
        self.rows_read = 0  # BM25 rows they added as the import stored them (tests)
        self.rows_tokenised = 0  # and tokenised

    def clear(self) -> None:
        with self._lock:
            self._current = None
            self._snapshot = None
            self._first = None
            self._wanted = None
            self._source = None
            self._generation += 1
            self.builds = 0
            self.entries_read = 0
            self.rows_read = 0
            self.rows_tokenised = 0
            threads = [t for t in (self._builder, self._poller) if t is not None]
            self._stop.set()
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(STOP_SECONDS)
        with self._lock:
            self._stop = threading.Event()
            self._poller = None
            self._builder = None

    @contextmanager
    def _building(self) -> Iterator[None]:
        """Every build: one at a time, and as a long-lived structure (no full collector pass during
        it, frozen once installed, which the build does inside)."""
        with self._build_lock, long_lived_build():
            yield

    def _counted(self, index: KnowledgeIndex) -> None:
        self.rows_read += index.rows_read
        self.rows_tokenised += index.rows_tokenised

    def current(self) -> KnowledgeIndex | None:
        return self._current

    def get(
        self, version: str, load: Callable[[], Iterable[SearchEntry]], *, timeout: float | None
    ) -> KnowledgeIndex | None:
        """The index to answer a lookup of ``version`` from: the current one (a newer ``version`` is
        built in the background meanwhile), or, before the process has any, the first build's, waited
        for at most ``timeout`` seconds (None: not ready in time; the build goes on). Raises what the
        first read or build raised."""
        with self._lock:
            index = self._current
            if index is not None:
                if _newer(version, index.version):
                    self._want(version, load)
                return index
            first = self._first
            starter = first is None
            if first is None:
                first = self._first = _First()
            generation = self._generation
        if starter:
            try:
                records, snapshot, read = read_for_build(version, load, None, lambda: None)
            except BaseException as exc:
                self._first_done(first, None, exc)
                raise
            self.entries_read += read
            threading.Thread(
                target=self._build_first,
                args=(version, first, records, snapshot, generation),
                name="knowledge-index-first",
                daemon=True,
            ).start()
        if not first.done.wait(timeout):
            return None
        if first.error is not None:
            raise first.error
        return first.index

    def _build_first(
        self,
        version: str,
        first: _First,
        records: list[SearchEntry],
        snapshot: Snapshot | None,
        generation: int,
    ) -> None:
        try:
            with self._building():
                index = build_index(version, records, vector_dim=_vector_dim())
                self._install(index, snapshot, generation)
        except BaseException as exc:
            logger.exception("knowledge index build failed")
            self._first_done(first, None, exc)
            return
        self._first_done(first, index, None)

    def _first_done(self, first: _First, index: KnowledgeIndex | None, error: BaseException | None) -> None:
        with self._lock:
            if self._first is first and (error is not None or self._current is not None):
                # A failure is not kept: the next lookup reads the store again.
                self._first = None
        first.index, first.error = index, error
        first.done.set()

    def _install(self, index: KnowledgeIndex, snapshot: Snapshot | None, generation: int) -> bool:
        with self._lock:
            self.builds += 1
            if generation != self._generation:
                return False
            current = self._current
            # A build that read an older state than the one answering never replaces it.
            if current is not None and _older(index.version, current.version):
                return False
            self._current = index
            self._snapshot = snapshot
            self._start_poller()
            return True

    # --- the background builder ---

    def _want(self, version: str, load: Callable[[], Iterable[SearchEntry]]) -> None:
        """(Under the lock.) Build ``version`` in the background; the newest wish wins."""
        self._wanted = (version, load)
        if self._builder is None or not self._builder.is_alive():
            self._builder = threading.Thread(
                target=self._build_wanted, args=(self._generation,), name="knowledge-index", daemon=True
            )
            self._builder.start()

    def _build_wanted(self, generation: int) -> None:
        try:
            while True:
                with self._lock:
                    wanted, self._wanted = self._wanted, None
                    if wanted is None or generation != self._generation:
                        self._builder = None if generation == self._generation else self._builder
                        return
                version, load = wanted
                try:
                    with self._building():
                        with self._lock:
                            previous, snapshot = self._current, self._snapshot
                        if previous is not None and not _newer(version, previous.version):
                            continue
                        started = time.monotonic()
                        records, snapshot, read = read_for_build(version, load, snapshot, _behind_requests)
                        self.entries_read += read
                        was_read = time.monotonic()
                        index = build_index(
                            version,
                            records,
                            previous=previous,
                            vector_dim=_vector_dim(),
                            pause=_behind_requests,
                            stored_rows=_stored_rows(load),
                        )
                        self._counted(index)
                        logger.info(
                            "knowledge index %s: %d entries (%d read) read in %.2f s, built in %.2f s "
                            "(rows added: %d as stored, %d tokenised)",
                            version,
                            len(records),
                            read,
                            was_read - started,
                            time.monotonic() - was_read,
                            index.rows_read,
                            index.rows_tokenised,
                        )
                        self._install(index, snapshot, generation)
                except Exception:
                    logger.warning("knowledge index: background build of %s failed", version, exc_info=True)
        finally:
            _release_connections()

    def wait_idle(self, timeout: float) -> bool:
        """Whether the background builder finished within ``timeout`` seconds (tests, the bench)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                builder = self._builder
                if self._wanted is None and (builder is None or not builder.is_alive()):
                    return True
            if builder is not None:
                builder.join(max(0.0, min(0.05, deadline - time.monotonic())))
            else:
                time.sleep(0.01)
        return False

    # --- a write of this process ---

    def refresh(self, version: str, load: Callable[[], Iterable[SearchEntry]], *, serving_only: bool) -> None:
        """Build ``version`` now, in the caller's time and transaction. ``serving_only``: only in a
        process that already answers lookups (a task worker builds no index it would never use)."""
        with self._lock:
            previous = self._current
            generation = self._generation
        if previous is None and serving_only:
            return
        if previous is not None and not _newer(version, previous.version):
            return
        with self._building():
            with self._lock:
                # A background build may have finished meanwhile.
                previous, snapshot = self._current, self._snapshot
            if previous is not None and not _newer(version, previous.version):
                return
            records, snapshot, read = read_for_build(version, load, snapshot, lambda: None)
            self.entries_read += read
            index = build_index(
                version, records, previous=previous, vector_dim=_vector_dim(), stored_rows=_stored_rows(load)
            )
            self._counted(index)
            self._install(index, snapshot, generation)

    # --- the poller of a shared store ---

    def watch(
        self, read_version: Callable[[], str], load: Callable[[], Iterable[SearchEntry]], *, poll: bool
    ) -> None:
        """Where the store's version and entries are read from; ``poll``: ask for the version every
        ``POLL_SECONDS`` once this process has an index (a store other servers change too)."""
        with self._lock:
            wanted = (read_version, load) if poll else None
            if self._source is None and wanted is not None:
                self._source = wanted
                if self._current is not None:
                    self._start_poller()

    def _start_poller(self) -> None:
        """(Under the lock.)"""
        if self._source is None or (self._poller is not None and self._poller.is_alive()):
            return
        self._poller = threading.Thread(
            target=self._poll, args=(self._generation, self._stop), name="knowledge-index-poll", daemon=True
        )
        self._poller.start()

    def _poll(self, generation: int, stop: threading.Event) -> None:
        try:
            while not stop.wait(POLL_SECONDS):
                with self._lock:
                    source, current = self._source, self._current
                    if generation != self._generation or source is None or current is None:
                        return
                read_version, load = source
                try:
                    version = read_version()
                except Exception:
                    logger.debug("knowledge index: version poll failed", exc_info=True)
                    continue
                if _newer(version, current.version):
                    with self._lock:
                        if generation == self._generation:
                            self._want(version, load)
        finally:
            _release_connections()


def _stored_rows(load: object) -> Callable[[Collection[int]], dict[int, bytes]] | None:
    """Where the rows the import counted are read from, when ``load`` keeps them."""
    return load.bm25_rows if isinstance(load, StoredRowsSource) else None


def _behind_requests() -> None:
    foreground_wait(PAUSE_SECONDS)


def _release_connections() -> None:
    """A background thread's database connection closes with it (it would stay open otherwise)."""
    try:
        from django.db import connections

        connections.close_all()
    except Exception:
        logger.debug("knowledge index: closing a background connection failed", exc_info=True)


_cache = _IndexCache()


def knowledge_index_for(
    version: str, load_entries: Callable[[], Iterable[SearchEntry]], *, timeout: float | None
) -> KnowledgeIndex | None:
    """The index a lookup of store ``version`` answers from (see ``_IndexCache.get``)."""
    return _cache.get(version, load_entries, timeout=timeout)


def may_lag(version: str, other: str) -> bool:
    """Whether two versions differ in their "may lag" part alone (``"<must see>#<may lag>"``)."""
    return "#" in version and "#" in other and version.split("#", 1)[0] == other.split("#", 1)[0]


def _vector_dim() -> int | None:
    space = embeddings.vector_space()
    return space.dim if space is not None else None


def knowledge_index_refresh(
    *,
    entries_version: str,
    load_entries: Callable[[], Iterable[SearchEntry]],
    serving_only: bool = False,
) -> None:
    """Build the index of ``entries_version`` now, in the caller's time (the store calls it after a
    change commits, ``serving_only``: in a process that answers lookups), so no lookup answers from
    the older one afterwards."""
    _cache.refresh(entries_version, load_entries, serving_only=serving_only)


def knowledge_index_watch(
    *, read_version: Callable[[], str], load_entries: Callable[[], Iterable[SearchEntry]], poll: bool
) -> None:
    """Where the background builder reads from; ``poll``: the store is shared by several servers, so
    this process asks for its version every ``POLL_SECONDS`` and builds a newer one at once."""
    _cache.watch(read_version, load_entries, poll=poll)


def knowledge_index_version() -> str | None:
    """The version of the index lookups answer from (None: none built yet)."""
    index = _cache.current()
    return index.version if index is not None else None


def knowledge_index_builds() -> int:
    """How many indexes this process has built since it started (or since the last forget)."""
    return _cache.builds


def knowledge_index_entries_read() -> int:
    """How many entries this process's index builds read from the store since it started (or since the
    last forget): a build after a change reads only the changed packs'."""
    return _cache.entries_read


def knowledge_index_rows_counted() -> tuple[int, int]:
    """Of the BM25 rows this process's builds added to an index since it started (or since the last
    forget): how many were read as the import counted them, and how many were tokenised here."""
    return _cache.rows_read, _cache.rows_tokenised


def knowledge_index_settle(timeout: float = 30.0) -> bool:
    """Wait until no background build is under way (tests, the bench)."""
    return _cache.wait_idle(timeout)


def knowledge_index_forget() -> None:
    """Drop the process's index and stop its background threads (tests; a store emptied under it)."""
    _cache.clear()
