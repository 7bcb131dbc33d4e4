from __future__ import annotations

from collections.abc import Iterator

import pytest

from recall import index_cache


@pytest.fixture(autouse=True)
def fresh_recall_cache() -> Iterator[None]:
    # Rolled-back tests can reuse a character's primary key and version; never serve another test's index.
    index_cache.clear()
    yield
    index_cache.clear()
