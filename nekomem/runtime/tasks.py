"""django-q2 entry point of the runtime: every schedule's tick passes the storage block here."""

from __future__ import annotations

import logging

from django.utils.module_loading import import_string

from nekomem.runtime.state import STORAGE_BLOCKED, StorageBlocked, storage_writer

logger = logging.getLogger(__name__)

SCHEDULED_TICK = "nekomem.runtime.tasks.scheduled_tick"


def scheduled_tick(func: str) -> object:
    """Run one tick of the schedule whose function is ``func``, unless storage is blocked.

    A tick skipped while blocked is not made up tick by tick: ``continue`` makes every schedule due.
    """
    with storage_writer() as allowed:
        if not allowed:
            logger.info("schedule tick %s skipped: storage is blocked", func)
            return STORAGE_BLOCKED
        try:
            return import_string(func)()
        except StorageBlocked:
            logger.info("schedule tick %s stopped: storage was blocked", func)
            return STORAGE_BLOCKED
