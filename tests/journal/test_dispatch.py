"""The outbox dispatcher: ops committed within a window leave in one batch, none is lost or doubled."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Sequence

from nekomem.journal.dispatch import OutboxDispatcher


class Recorder:
    def __init__(self, fail_first: int = 0) -> None:
        self.batches: list[list[uuid.UUID]] = []
        self.fail_first = fail_first
        self.lock = threading.Lock()

    def __call__(self, op_ids: Sequence[uuid.UUID]) -> None:
        with self.lock:
            if self.fail_first:
                self.fail_first -= 1
                raise ConnectionError("broker down")
            self.batches.append(list(op_ids))

    def sent(self) -> list[uuid.UUID]:
        with self.lock:
            return [op_id for batch in self.batches for op_id in batch]


def wait_for(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_ops_added_within_the_window_are_sent_as_one_batch():
    recorder = Recorder()
    dispatcher = OutboxDispatcher(send=recorder, window_seconds=0.2)
    ops = [uuid.uuid4() for _ in range(5)]
    for op_id in ops:
        dispatcher.add(op_id)
    wait_for(lambda: len(recorder.sent()) == 5)
    assert recorder.batches == [ops]


def test_a_window_of_zero_sends_each_op_at_once_in_the_callers_thread():
    recorder = Recorder()
    dispatcher = OutboxDispatcher(send=recorder, window_seconds=0)
    first, second = uuid.uuid4(), uuid.uuid4()
    dispatcher.add(first)
    assert recorder.batches == [[first]]
    dispatcher.add(second)
    assert recorder.batches == [[first], [second]]


def test_many_threads_adding_lose_and_double_nothing():
    recorder = Recorder()
    dispatcher = OutboxDispatcher(send=recorder, window_seconds=0.005)
    ops = [[uuid.uuid4() for _ in range(200)] for _ in range(8)]

    def add_all(chunk: list[uuid.UUID]) -> None:
        for op_id in chunk:
            dispatcher.add(op_id)

    threads = [threading.Thread(target=add_all, args=(chunk,)) for chunk in ops]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wait_for(lambda: len(recorder.sent()) == 1600)
    sent = recorder.sent()
    assert sorted(sent) == sorted(op_id for chunk in ops for op_id in chunk)
    assert len(recorder.batches) < 1600  # batched, not one send per op
    for chunk in ops:  # each thread's ops keep their order
        positions = [sent.index(op_id) for op_id in chunk]
        assert positions == sorted(positions)


def test_a_failed_send_does_not_stop_the_dispatcher():
    recorder = Recorder(fail_first=1)
    dispatcher = OutboxDispatcher(send=recorder, window_seconds=0.01)
    lost = uuid.uuid4()
    dispatcher.add(lost)
    wait_for(lambda: recorder.fail_first == 0)
    kept = uuid.uuid4()
    dispatcher.add(kept)
    wait_for(lambda: recorder.sent() == [kept])  # the lost op is the sweep's, not sent twice here


def test_flush_sends_what_is_pending_at_once():
    recorder = Recorder()
    dispatcher = OutboxDispatcher(send=recorder, window_seconds=30)
    op_id = uuid.uuid4()
    dispatcher.add(op_id)
    assert dispatcher.flush() == 1
    assert recorder.batches == [[op_id]]
    assert dispatcher.flush() == 0
