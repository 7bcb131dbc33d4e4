"""A background fill waits while a query of its process is in flight, and only that long: it sleeps
until the last query ends (a bounded time at most), without waking to poll meanwhile."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from recall import index_cache
from tests.support.waits import CallProbe


def switches_of(tid: int) -> int:
    status = Path(f"/proc/self/task/{tid}/status").read_text()
    return int(
        next(line for line in status.splitlines() if line.startswith("voluntary_ctxt_switches")).split()[1]
    )


def wait_in_background(limit: float, probe: CallProbe | None = None) -> tuple[threading.Thread, dict]:
    seen: dict = {}

    def fill() -> None:
        if probe is not None:
            probe.install()
        tid = threading.get_native_id()
        before, started = switches_of(tid), time.monotonic()
        index_cache._give_way(limit=limit)
        seen["waited"], seen["wake_ups"] = time.monotonic() - started, switches_of(tid) - before

    thread = threading.Thread(target=fill)
    thread.start()
    return thread, seen


def test_the_fill_goes_on_once_the_last_query_in_flight_has_its_answer() -> None:
    parked = CallProbe("wait")  # threading.Condition.wait: the fill sleeps until told
    with index_cache.answering():
        with index_cache.answering():
            thread, seen = wait_in_background(limit=10, probe=parked)
            assert parked.wait(), "the fill never went to sleep"
        # One query still in flight: the first one's answer must not wake the fill.
        assert thread.is_alive() and not seen
    thread.join(2)
    assert not thread.is_alive()
    assert seen["waited"] < 2  # woken by the last answer, not by the 10 s limit
    # Asleep all along: a poll every 2 ms would wake it at every poll.
    assert seen["wake_ups"] < 20, seen


def test_the_wait_is_bounded_and_nothing_in_flight_means_no_wait() -> None:
    with index_cache.answering():
        thread, seen = wait_in_background(limit=0.2)
        thread.join(3)
        assert not thread.is_alive() and 0.2 <= seen["waited"] < 2
    started = time.monotonic()
    index_cache._give_way(limit=5)
    assert time.monotonic() - started < 0.1
