"""The BM25 view of a new index made from the previous one's: gone rows tombstoned, new rows appended,
read as the import counted them (``stored_rows``) or tokenised."""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from knowledge.search.stored_rows import rows_from_stored, rows_joined, rows_split
from knowledge.search.tokenising import counted_flat, counted_rows, tokenised
from knowledge.search.types import SearchEntry
from recall.engine import Bm25View, CountedRows

if TYPE_CHECKING:
    from knowledge.search.index import KnowledgeIndex

# Work between two calls of a build's ``pause`` (see ``knowledge.search.index``).
PAUSE_EVERY_ROWS = 20  # counted rows appended to the BM25 view
PAUSE_EVERY_STORED_ROWS = 50  # stored rows checked and read


def view_updated(
    previous: KnowledgeIndex,
    wanted: list[tuple[tuple[str, int], str, int, int]],
    entries: Sequence[SearchEntry],
    offload_rows: int,
    pause: Callable[[], object],
    stored_rows: Callable[[Collection[int]], dict[int, bytes]] | None,
) -> tuple[Bm25View, dict[tuple[str, int], int], int, int]:
    """The previous view with gone rows tombstoned and new rows appended (a copy: queries read the
    previous index meanwhile), and how many of the new rows were read as stored and tokenised."""
    wanted_keys = {key for key, _, _, _ in wanted}
    gone = [row for key, row in previous.row_keys.items() if key not in wanted_keys]
    new = [(key, text, owner, chunk) for key, text, owner, chunk in wanted if key not in previous.row_keys]
    if not gone and not new:
        return previous.view, previous.row_keys, 0, 0
    view = copy.deepcopy(previous.view)
    for row in gone:
        view.remove(row)
    row_keys = {key: row for key, row in previous.row_keys.items() if key in wanted_keys}
    first = view.size
    texts = [text for _, text, _, _ in new]
    read = 0
    if stored_rows is not None and texts:
        ids = [_chunk_id(entries[owner], chunk) for _, _, owner, chunk in new]
        rows, read = _rows_counted(texts, ids, stored_rows, offload_rows, pause)
        pause()
        view.append_flat(rows)
    elif len(texts) >= offload_rows:
        # Counted in a child process and appended by whole-array steps: appending them a row at a time
        # here held the GIL for seconds at 5 000 rows.
        pause()
        view.append_flat(tokenised(counted_flat, texts, offload_rows))
    else:
        counted = counted_rows(texts) if texts else []
        for start in range(0, len(counted), PAUSE_EVERY_ROWS):
            pause()
            view.append_counted(counted[start : start + PAUSE_EVERY_ROWS])
    for offset, (key, _, _, _) in enumerate(new):
        row_keys[key] = first + offset
    return view, row_keys, read, len(texts) - read


def _chunk_id(entry: SearchEntry, position: int) -> int | None:
    """The store's id of the entry's ``position``-th chunk (None: the entry came without chunks)."""
    if not entry.chunks:
        return None
    return sorted(entry.chunks, key=lambda chunk: chunk.ordinal)[position].chunk_id


def _rows_counted(
    texts: list[str],
    chunk_ids: list[int | None],
    stored_rows: Callable[[Collection[int]], dict[int, bytes]],
    offload_rows: int,
    pause: Callable[[], object],
) -> tuple[CountedRows, int]:
    """``texts`` counted for ``Bm25View.append_flat``: read as the import stored them where their text
    is the one counted, tokenised (in the child from ``offload_rows``) where not; and how many were
    read."""
    found = stored_rows([chunk_id for chunk_id in chunk_ids if chunk_id is not None])
    rows: list[CountedRows | None] = []
    for start in range(0, len(texts), PAUSE_EVERY_STORED_ROWS):
        pause()
        rows += rows_from_stored(
            texts[start : start + PAUSE_EVERY_STORED_ROWS],
            [
                found.get(chunk_id) if chunk_id is not None else None
                for chunk_id in chunk_ids[start : start + PAUSE_EVERY_STORED_ROWS]
            ],
        )
    missing = [at for at, row in enumerate(rows) if row is None]
    if missing:
        pause()
        counted = tokenised(counted_flat, [texts[at] for at in missing], offload_rows)
        for at, row in zip(missing, rows_split(counted), strict=True):
            rows[at] = row
    return rows_joined([row for row in rows if row is not None]), len(texts) - len(missing)
