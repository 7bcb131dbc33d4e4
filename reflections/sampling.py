"""Weighted sampling without replacement (Efraimidis–Spirakis), for proactive surfacing (§3.5.2)."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def weighted_sample(items: Sequence[T], weights: Sequence[float], k: int, *, rng: random.Random) -> list[T]:
    """``k`` items drawn without replacement, each with probability proportional to its weight.

    Each item gets the key ``u ** (1 / w)`` for a uniform ``u`` and the ``k`` largest keys win; the
    log form ``log(u) / w`` orders the same and does not underflow for small weights. Items with a
    weight of zero or less are drawn only after every positive one.
    """
    if len(items) != len(weights):
        raise ValueError("items and weights differ in length")
    if k <= 0:
        return []
    keyed: list[tuple[float, int]] = []
    for index, weight in enumerate(weights):
        u = rng.random() or 1e-300
        key = math.log(u) / weight if weight > 0 else -math.inf
        keyed.append((key, index))
    keyed.sort(key=lambda pair: (-pair[0], pair[1]))
    return [items[index] for _, index in keyed[:k]]
