"""Structures a server process builds after its start and keeps until it replaces them (the knowledge
index), kept out of the cyclic collector's full passes as ``nekomem/wsgi.py`` keeps what is loaded at
start.

A build of the knowledge index after an import makes some hundred thousand objects. They crossed the
collector's threshold for a full pass in the middle of the build, and the pass, walking every object
of the index, held the interpreter lock for 220–250 ms (``bench/knowledge_speed.py``'s take-in, one
such pass per import): every request of the process waited that long. Inside ``long_lived_build``
the collector makes no full pass (its young passes go on, so short-lived cycles are still freed), and
on the way out what is alive is frozen, so no later full pass walks the new structure either. A
process that froze nothing at start (a management command, the tests) is left as it is.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# The third threshold while a build runs: the number of young passes before a full one.
NO_FULL_PASS = 1 << 30

_lock = threading.Lock()
_builds = 0
_thresholds: tuple[int, int, int] | None = None
# Set by ``freeze_loaded``. Not ``gc.get_freeze_count()``: it counts the frozen objects one by one
# (60 ms with the lock held in a server with an index).
_freezing = False


def freeze_loaded() -> None:
    """Freeze what this process has loaded (Django, the URLconf, the models, the warm-ups' work),
    which lives as long as it does; from now on ``long_lived_build`` freezes what it builds too."""
    global _freezing
    gc.freeze()
    _freezing = True


@contextmanager
def long_lived_build() -> Iterator[None]:
    """Around a build whose result replaces a long-lived structure (the new one is in place when the
    block ends): no full collection meanwhile, and everything alive frozen afterwards. Builds on
    several threads may overlap; the thresholds come back when the last one ends."""
    global _builds, _thresholds
    if not _freezing:
        yield
        return
    with _lock:
        _builds += 1
        if _builds == 1:
            _thresholds = gc.get_threshold()
            gc.set_threshold(_thresholds[0], _thresholds[1], NO_FULL_PASS)
    try:
        yield
    finally:
        # The young generations first: cycles that died during the build are freed, not frozen.
        gc.collect(1)
        gc.freeze()
        with _lock:
            _builds -= 1
            if _builds == 0 and _thresholds is not None:
                gc.set_threshold(*_thresholds)
                _thresholds = None
