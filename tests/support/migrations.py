"""Run the project's migrations to a given state inside a test, and back to today's schema after."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.apps.registry import Apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets: list[tuple[str, str]]) -> Apps:
    """Migrate (forwards or backwards) to ``targets``; returns the historical models of that state."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@contextmanager
def schema_at(targets: list[tuple[str, str]]) -> Iterator[Apps]:
    """The schema as of ``targets`` for the body; today's schema again afterwards, whatever happened."""
    try:
        yield migrate(targets)
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
