"""Statement counts of a request, for tests that pin the hot path's round trips."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from django.db import connection


@contextmanager
def statements_pinned(
    assert_num_queries: Callable[[int], AbstractContextManager[Any]], counts: dict[str, int]
) -> Iterator[None]:
    """Assert the block's statement count on this backend (``counts`` is keyed by connection vendor).

    Every request reads the storage state once (one prebuilt SELECT), so every pinned count includes
    it. Inside a test's transaction a service's ``atomic`` is a SAVEPOINT / RELEASE pair: it stands
    for the BEGIN / COMMIT the same request costs in production.
    """
    with assert_num_queries(counts[connection.vendor]):
        yield
