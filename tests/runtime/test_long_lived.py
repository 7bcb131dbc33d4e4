"""A structure a server builds after its start (the knowledge index) is made without a full pass of the
cyclic collector and frozen once in place (nekomem/runtime/long_lived.py)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from nekomem.runtime import long_lived

REPO_ROOT = Path(__file__).resolve().parents[2]

# Run in a child: freezing is for the whole process, and the test process must keep collecting.
CHILD = """
import gc, json, threading
from nekomem.runtime.long_lived import freeze_loaded, long_lived_build

full_passes = []

def counted(phase, info):
    if phase == "stop" and info["generation"] == 2:
        full_passes.append(1)

gc.callbacks.append(counted)
freeze_loaded()
normal = gc.get_threshold()

def made(count):
    return [[n] for n in range(count)]

before = gc.get_freeze_count()
with long_lived_build():
    kept = made(400_000)
    inside = gc.get_threshold()
in_build = len(full_passes)
frozen = gc.get_freeze_count() - before

# Two builds that overlap, on two threads: the thresholds come back when the second one ends.
first_in = threading.Event()
first_may_end = threading.Event()
def first():
    with long_lived_build():
        first_in.set()
        first_may_end.wait(10)
thread = threading.Thread(target=first)
thread.start()
first_in.wait(10)
with long_lived_build():
    pass
while_first_builds = gc.get_threshold()
first_may_end.set()
thread.join(10)
after_both = gc.get_threshold()

# The same allocation outside a build: what the collector does without it.
passes = len(full_passes)
other = made(400_000)
outside = len(full_passes) - passes
print(json.dumps({
    "normal": normal, "inside": inside, "in_build": in_build, "frozen": frozen, "outside": outside,
    "while_first_builds": while_first_builds, "after_both": after_both,
}))
"""


def _child() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_a_build_in_a_freezing_process_makes_no_full_pass_and_is_frozen_afterwards() -> None:
    seen = _child()
    # Without the build, the same objects cross the threshold of a full pass.
    assert seen["outside"] >= 1
    assert seen["in_build"] == 0
    assert seen["frozen"] >= 400_000
    assert seen["inside"][:2] == seen["normal"][:2]
    assert seen["inside"][2] == long_lived.NO_FULL_PASS
    assert seen["while_first_builds"][2] == long_lived.NO_FULL_PASS
    assert seen["after_both"] == seen["normal"]


def test_a_process_that_froze_nothing_is_left_as_it_is() -> None:
    # The tests' own process: it never froze what it loaded, so a build changes nothing here.
    assert long_lived._freezing is False
    thresholds, frozen = gc.get_threshold(), gc.get_freeze_count()
    with long_lived.long_lived_build():
        assert gc.get_threshold() == thresholds
    assert gc.get_freeze_count() == frozen
