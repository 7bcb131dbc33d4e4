"""A ledger the database refuses to write: a real trigger, on either database, so the failure the
routes answer with ``persisted: false`` is the database's own."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

TABLE = "identity_activityevent"


@contextmanager
def ledger_refuses_writes() -> Iterator[None]:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "CREATE FUNCTION nekomem_test_refuse() RETURNS trigger AS $$ "
                "BEGIN RAISE EXCEPTION 'ledger refused'; END; $$ LANGUAGE plpgsql"
            )
            cursor.execute(
                f"CREATE TRIGGER nekomem_test_refuse BEFORE INSERT ON {TABLE} "
                "FOR EACH ROW EXECUTE FUNCTION nekomem_test_refuse()"
            )
        else:
            cursor.execute(
                f"CREATE TRIGGER nekomem_test_refuse BEFORE INSERT ON {TABLE} "
                "BEGIN SELECT RAISE(ABORT, 'ledger refused'); END"
            )
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute(f"DROP TRIGGER nekomem_test_refuse ON {TABLE}")
                cursor.execute("DROP FUNCTION nekomem_test_refuse()")
            else:
                cursor.execute("DROP TRIGGER nekomem_test_refuse")
