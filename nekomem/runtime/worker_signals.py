"""A stop that reaches a granian worker while it is still loading the application is kept, not lost.

Granian forks its workers from its master and installs a worker's stop handlers only after the worker
has loaded the application (for us: Django, the start-up checks and the warm-ups before serving, a
second or two). Until then the worker runs the handlers it inherited from its master, which set an
event of the master's that nothing in the worker reads: a SIGTERM arriving then was swallowed, the
worker went on to serve, and its master waited out its 20 s kill timeout for it. That happened
whenever ``serve`` was stopped, or killed, in its first seconds (tests/e2e/test_make_run.py).

While the application loads, a worker's stop signals are only noted; once granian's own handlers are
in place, the noted ones are sent again to the worker's main thread, where they stop it as any later
one does. A stop that came even earlier, between the fork and this module (``serve`` stopped just as
a worker was forked), ran the inherited master handler: that sets ``interrupt_signal`` on the worker's
copy of granian's server object, which is read here as one more noted stop.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
import time
from types import FrameType

GRANIAN_WORKER = "granian-worker"  # the name granian gives its worker processes
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
LOOK_EVERY_SECONDS = 0.02


def hold_stop_signals_while_loading() -> None:
    """In a granian worker (first thing its application module does): note stop signals until granian
    handles them, then deliver the noted ones. Elsewhere (tests, ``manage.py``), nothing."""
    if multiprocessing.current_process().name != GRANIAN_WORKER:
        return
    if threading.current_thread() is not threading.main_thread():
        return  # handlers can only be set from the main thread, which is where granian loads the app
    noted: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        noted.append(signum)

    inherited = signal.getsignal(signal.SIGTERM)
    for signum in STOP_SIGNALS:
        signal.signal(signum, note)
    main_thread = threading.main_thread().ident
    assert main_thread is not None

    def deliver_once_granian_handles_them() -> None:
        while any(signal.getsignal(signum) is note for signum in STOP_SIGNALS):
            time.sleep(LOOK_EVERY_SECONDS)
        if not noted and _stopped_before_the_hold(inherited):
            noted.append(signal.SIGTERM)
        for signum in noted:
            signal.pthread_kill(main_thread, signum)

    threading.Thread(
        target=deliver_once_granian_handles_them, name="worker-stop-signals", daemon=True
    ).start()


def _stopped_before_the_hold(inherited: object) -> bool:
    """Whether the master's handler, inherited through the fork, ran in this worker: granian's is a
    bound method of its server object that sets ``interrupt_signal``, false in the master at every
    fork (a stopping master forks no worker)."""
    server = getattr(inherited, "__self__", None)
    return getattr(server, "interrupt_signal", False) is True
