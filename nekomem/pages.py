"""Reading a large result in pages of plain queries rather than through ``QuerySet.iterator()``.

On PostgreSQL, ``iterator()`` outside a transaction opens a server-side cursor ``WITH HOLD``: DECLARE,
a describe, FETCH and CLOSE are four round trips, and the server materialises the whole result
before the first row. That is the price of a 100k-row build, but the recall hot path reads the one
or two rows a turn added through the same readers, and paid it on every query. Keyset pages (by
primary key, each a range of the index) cost one round trip for a small result, and keep a large
one bounded in memory like the cursor did, on every backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from django.db.models import QuerySet

Rows = QuerySet[Any, tuple[Any, ...]]


def _after_pk(rows: Rows, last: tuple[Any, ...]) -> Rows:
    return rows.filter(pk__gt=last[0])


def values_in_pages(
    rows: Rows, *, size: int, after: Callable[[Rows, tuple[Any, ...]], Rows] = _after_pk
) -> Iterator[tuple[Any, ...]]:
    """The tuples of ``rows``, a ``values_list`` ordered by a unique key, read ``size`` at a time; each
    next page is ``after(rows, last tuple read)``. By default the key is the primary key, the first
    field."""
    return pages_read(lambda last: list((rows if last is None else after(rows, last))[:size]), size=size)


def pages_read(
    read_page: Callable[[tuple[Any, ...] | None], list[tuple[Any, ...]]], *, size: int
) -> Iterator[tuple[Any, ...]]:
    """The rows of successive pages: ``read_page(None)`` first, then ``read_page(last row read)`` while
    a page came back full (``size`` rows). For reads that are not querysets (hand-built SQL)."""
    last: tuple[Any, ...] | None = None
    while True:
        batch = read_page(last)
        yield from batch
        if len(batch) < size:
            return
        last = batch[-1]
