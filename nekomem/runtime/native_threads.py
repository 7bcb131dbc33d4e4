"""Native thread pools off in every server process: numpy's matrix products run on the calling thread.

OpenBLAS starts a thread per core when numpy loads and, after each product large enough to split
(a recall pool past about 1 000 rows: the cosine of every row), its threads spin waiting for the
next one for a while before they sleep. A web worker answering a query every few tens of
milliseconds kept one spinning all the time: a core taken from the other worker, PostgreSQL and the
cluster, which showed as query latency growing with the pools (bench/load_faults.py). The server's
parallelism is its processes and view threads; one product of a query is a fraction of a millisecond
on one core. An operator's own setting of these variables is kept.

``serving_threads`` sets this and the interpreter lock's switch interval, the two settings of a
process's threads that every server process (and a benchmark playing one) shares.
"""

from __future__ import annotations

import os
import sys

SINGLE_THREADED = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
# A view thread that has waited for the database waits again for the interpreter lock, until the
# thread holding it has run out its switch interval (5 ms by default): a /cache paid that after each
# of its round trips whenever a query ran beside it in the same process (bench/load_faults.py, chat
# shape: the /cache tail shrank at 1 ms, and the extra switches cost nothing measurable).
GIL_SWITCH_SECONDS = 0.001


def single_threaded_here() -> None:
    """Set them in this process, and so in the children it starts: effective only before numpy is
    first imported, hence called first by the entry points (``manage.py``, ``nekomem/wsgi.py``)."""
    for name, value in SINGLE_THREADED.items():
        os.environ.setdefault(name, value)


def serving_threads() -> None:
    """What a process that answers requests sets for its threads: the native pools off (so, like
    ``single_threaded_here``, before numpy is first imported) and the interpreter lock's 1 ms turns.
    ``nekomem/wsgi.py`` calls it for every server; a benchmark that plays a server in its own process
    calls it too, so its requests meet the same turns."""
    single_threaded_here()
    sys.setswitchinterval(GIL_SWITCH_SECONDS)
