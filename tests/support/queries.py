"""Statement counts of a request, for tests that pin the hot path's round trips."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from django.db import connection

from nekomem.runtime import state


@contextmanager
def statements_pinned(
    assert_num_queries: Callable[[int], AbstractContextManager[Any]], counts: dict[str, int]
) -> Iterator[None]:
    """Assert the block's statement count on this backend (``counts`` is keyed by connection vendor).

    The storage-block check runs at most once a second per process; it is made due first, so every
    pinned count includes it (the first request of each second pays it) and timing cannot move the
    count. Inside a test's transaction a service's ``atomic`` is a SAVEPOINT / RELEASE pair: it stands
    for the BEGIN / COMMIT the same request costs in production.
    """
    state._forget_block_cache()
    with assert_num_queries(counts[connection.vendor]):
        yield
