"""Reading a large result in pages of plain queries rather than through ``QuerySet.iterator()``.

On PostgreSQL, ``iterator()`` outside a transaction opens a server-side cursor ``WITH HOLD``: DECLARE,
a describe, FETCH and CLOSE are four round trips, and the server materialises the whole result
before the first row. That is the price of a 100k-row build, but the recall hot path reads the one
or two rows a turn added through the same readers, and paid it on every query. Keyset pages (by
primary key, each a range of the index) cost one round trip for a small result, and keep a large
one bounded in memory like the cursor did, on every backend.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet


def values_in_pages(rows: QuerySet[Any, tuple[Any, ...]], *, size: int) -> Iterator[tuple[Any, ...]]:
    """The tuples of ``rows``, a ``values_list`` whose first field is the primary key and which is
    ordered by it, read ``size`` at a time (the next page starts after the last key read)."""
    last: Any = None
    while True:
        page = list((rows if last is None else rows.filter(pk__gt=last))[:size])
        yield from page
        if len(page) < size:
            return
        last = page[-1][0]
