"""Test settings: the real settings, with django-q2 running tasks inline where a test enqueues them.

Tests that need a real broker or cluster start real processes with the plain settings.
"""

import os

from nekomem.settings import *  # noqa: F403
from nekomem.settings import DATABASES, IS_SQLITE, Q_CLUSTER

Q_CLUSTER = {**Q_CLUSTER, "sync": True}
# Builds run in the test's own thread, inside its transaction (a build thread would not see its rows).
RECALL_BUILD_WAIT_SECONDS = None
# Queries wait for the model, so an answer never depends on how fast it loaded.
RECALL_MODEL_WAIT_SECONDS = None
# The vector filler lets its connection go as soon as it has nothing to fill.
RECALL_VECTOR_FILLER_IDLE_SECONDS = 0.0
# New chat turns are embedded by the backfill a test runs, not by a thread of their own.
RECALL_EMBED_TURNS_ON_ARRIVAL = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
if not IS_SQLITE:
    # One test database per run, so two runs on one machine do not drop each other's database.
    DATABASES["default"]["TEST"] = {"NAME": f"test_nekomem_{os.getpid()}"}
