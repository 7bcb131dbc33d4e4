"""Per-process cache of recall indexes (see ``recall.index_cache.cache``)."""

from recall.index_cache.cache import *  # noqa: F403
from recall.index_cache.cache import (  # noqa: F401
    _cache,
    _give_way,
    _lock,
    answering,
    counters,
)
