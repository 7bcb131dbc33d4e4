"""A stop sent to a granian worker before it handles stops itself reaches granian's handler later.

The worker is a forked process named as granian names its workers, with a master handler shaped as
granian's (a bound method setting ``interrupt_signal``); granian's own handler is stood in by one that
reports the stop through a pipe.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from multiprocessing.connection import Connection

import pytest

from nekomem.runtime.worker_signals import GRANIAN_WORKER, hold_stop_signals_while_loading


class MasterServer:
    """The shape of granian's server object: its stop handler sets a flag and an event."""

    def __init__(self) -> None:
        self.interrupt_signal = False
        self.main_loop_interrupt = threading.Event()

    def signal_handler_interrupt(self, *args: object) -> None:
        self.interrupt_signal = True
        self.main_loop_interrupt.set()


def worker(report: Connection, stop_before_the_hold: bool, stop_while_loading: bool) -> None:
    if stop_before_the_hold:
        os.kill(os.getpid(), signal.SIGTERM)  # runs the inherited master handler
    hold_stop_signals_while_loading()
    if stop_while_loading:
        os.kill(os.getpid(), signal.SIGTERM)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stopped.set())  # granian's worker handler
    signal.signal(signal.SIGINT, lambda signum, frame: stopped.set())
    for _ in range(100):  # the stop, delivered to the main thread, runs between these waits
        if stopped.wait(0.02):
            break
    report.send(stopped.is_set())


def run_worker(*, stop_before_the_hold: bool, stop_while_loading: bool = False) -> bool:
    master = MasterServer()
    previous = signal.signal(signal.SIGTERM, master.signal_handler_interrupt)
    try:
        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        process = context.Process(
            target=worker, name=GRANIAN_WORKER, args=(send, stop_before_the_hold, stop_while_loading)
        )
        process.start()
        stopped = receive.recv() if receive.poll(10) else None
        process.join(10)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert stopped is not None, "the worker reported nothing"
    assert not master.interrupt_signal, "the master's own flag is untouched by the worker's stop"
    return bool(stopped)


@pytest.mark.parametrize(
    ("before", "while_loading"), [(True, False), (False, True)], ids=["before-the-hold", "while-loading"]
)
def test_a_stop_sent_before_granian_handles_stops_reaches_its_handler(before: bool, while_loading: bool):
    assert run_worker(stop_before_the_hold=before, stop_while_loading=while_loading)


def test_a_worker_never_stopped_is_not_stopped():
    assert not run_worker(stop_before_the_hold=False)
