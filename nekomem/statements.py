"""Pieces of hand-built statements, built from the models so they follow the schema.

Layer-agnostic: the chat turn's statement (``recent/services/turn_write.py``) and the outbox's
(``nekomem/journal/services.py``) are assembled from these. Through the ORM a chat turn is a
transaction of eight statements, each a round trip and a query compilation; on PostgreSQL the same
write fits in one statement whose data-modifying CTEs run atomically together. The pieces here keep
such a statement honest: column lists, defaults, ``auto_now`` stamps and value adaptation all come
from the model fields, as ``Model.save()`` would prepare them, so a field added to a model is
written here too. The read pieces (``select_columns``) do the same for the few reads every chat
request makes: recall's character and its new raw turns.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import DateField, Field, Model
from django.db.models.expressions import Col
from django.utils import timezone


def database() -> BaseDatabaseWrapper:
    """The default connection itself, not the thread-local proxy (a lookup on every attribute)."""
    return connections[DEFAULT_DB_ALIAS]


def model_field(model: type[Model], name: str) -> Field:
    """A concrete field of ``model`` (not a reverse relation), for building statements from it."""
    field = model._meta.get_field(name)
    if not isinstance(field, Field) or field.column is None:
        raise TypeError(f"{model.__name__}.{name} is not a concrete field")
    return field


def column(model: type[Model], name: str) -> str:
    """The column behind field ``name``, unquoted."""
    return str(model_field(model, name).column)


@functools.cache
def _insert_columns(model: type[Model], vendor: str) -> tuple[tuple[Field, ...], str]:
    fields = tuple(
        f
        for f in model._meta.concrete_fields
        if not (f.primary_key and getattr(f, "db_returning", False))  # auto ids come from the sequence
    )
    quote = database().ops.quote_name
    return fields, ", ".join(quote(str(f.column)) for f in fields)


def insert_select_sql(
    model: type[Model],
    rows: Sequence[Mapping[str, Any]],
    *,
    source: str | None = None,
    computed: Callable[[int], dict[str, str]] | None = None,
) -> tuple[str, list[Any]]:
    """``INSERT INTO <table> (…) SELECT … [FROM <source>] UNION ALL …``: one row per mapping.

    ``rows`` hold values by field attname (``character_id``); a field left out gets what ``save()``
    would give it: the current time when it is ``auto_now``/``auto_now_add``, else its default.
    ``source`` is a CTE name (or any FROM item) the rows depend on: when it yields no row, nothing is
    inserted. ``computed(i)`` maps columns of row ``i`` to SQL expressions over ``source`` (a
    position taken from a counter the same statement bumps, say). An auto primary key is left to the
    database.
    """
    if not rows:
        raise ValueError("insert_select_sql needs at least one row")
    connection = database()
    fields, columns = _insert_columns(model, connection.vendor)
    known = {f.column for f in fields}
    now = timezone.now()
    selects: list[str] = []
    params: list[Any] = []
    for index, row in enumerate(rows):
        overrides = computed(index) if computed else {}
        if unknown := set(overrides) - known:
            raise ValueError(f"computed columns not in {model._meta.db_table}: {sorted(unknown)}")
        expressions = []
        for f in fields:
            if f.column in overrides:
                expressions.append(overrides[f.column])
                continue
            if f.attname in row:
                value = row[f.attname]
            elif isinstance(f, DateField) and (f.auto_now or f.auto_now_add):
                value = now
            else:
                value = f.get_default()
            expressions.append("%s")
            params.append(f.get_db_prep_save(value, connection))
        selects.append(f"SELECT {', '.join(expressions)}" + (f" FROM {source}" if source else ""))
    return f"INSERT INTO {table(model)} ({columns}) {' UNION ALL '.join(selects)}", params


# Internal field types whose Python values the database drivers take as they are: no preparation.
_PLAIN_TYPES = frozenset(
    {
        "AutoField",
        "BigAutoField",
        "BigIntegerField",
        "BooleanField",
        "CharField",
        "FloatField",
        "ForeignKey",
        "IntegerField",
        "OneToOneField",
        "PositiveBigIntegerField",
        "PositiveIntegerField",
        "PositiveSmallIntegerField",
        "SlugField",
        "SmallIntegerField",
        "TextField",
    }
)


@functools.cache
def _preparers(model: type[Model], vendor: str) -> tuple[tuple[Field, bool], ...]:
    """Each insert column's field, and whether its value needs ``get_db_prep_save``."""
    fields, _ = _insert_columns(model, vendor)
    return tuple((f, f.get_internal_type() not in _PLAIN_TYPES) for f in fields)


def instances_insert(model: type[Model], instances: Sequence[Model], *, batch: int = 5000) -> None:
    """Insert unsaved instances with one ``executemany`` per batch: what ``bulk_create`` writes, without
    its per-value query compilation (most of an import's time at 100k rows). Values are prepared as
    ``save()`` prepares them (``pre_save`` for ``auto_now`` stamps, ``get_db_prep_save`` for every type
    a driver does not take as it is). The instances get no primary keys: read them back if needed.
    """
    if not instances:
        return
    connection = database()
    preparers = _preparers(model, connection.vendor)
    stamped = [f for f, _ in preparers if isinstance(f, DateField) and (f.auto_now or f.auto_now_add)]
    rows = []
    for instance in instances:
        for f in stamped:
            f.pre_save(instance, add=True)
        rows.append(
            [
                f.get_db_prep_save(getattr(instance, f.attname), connection)
                if prepare
                else getattr(instance, f.attname)
                for f, prepare in preparers
            ]
        )
    prepared_rows_insert(model, rows, batch=batch)


def insert_preparers(model: type[Model]) -> tuple[tuple[Field, bool], ...]:
    """The fields an insert writes (an auto primary key left out), in column order, each with whether
    its Python value needs ``get_db_prep_save`` before a driver takes it: what ``prepared_rows_insert``
    expects its rows to follow."""
    return _preparers(model, database().vendor)


@functools.cache
def _values_insert_sql(model: type[Model], vendor: str) -> str:
    fields, columns = _insert_columns(model, vendor)
    return f"INSERT INTO {table(model)} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})"


@functools.cache
def _qmark_values_insert_sql(model: type[Model], vendor: str) -> str:
    return _values_insert_sql(model, vendor).replace("%s", "?")


def prepared_rows_insert(
    model: type[Model],
    rows: Sequence[Sequence[Any]],
    *,
    batch: int = 5000,
    connection: BaseDatabaseWrapper | None = None,
) -> None:
    """Insert rows whose values are already prepared for the database, one per ``insert_preparers``
    field in its order: one ``executemany`` per batch of a statement built once per model and backend.
    For a writer that builds its rows from plain values (no model instance, no per-row stamping);
    ``connection``: the default one, when the caller already holds it (``database()`` is a lookup in
    thread-local storage)."""
    if not rows:
        return
    connection = connection or database()
    if connection.vendor == "sqlite" and _unobserved_in_transaction(connection):
        # Django's SQLite cursor rewrites each statement's ``%s`` to ``?`` with a regular expression on
        # every call: a tenth of what a version costs the edit it rides on (issue 49). The statement is
        # written with ``?`` once instead, and run on the driver's connection, inside the transaction
        # Django opened, its errors still Django's.
        sql = _qmark_values_insert_sql(model, connection.vendor)
        with connection.wrap_database_errors:
            for start in range(0, len(rows), batch):
                connection.connection.executemany(sql, rows[start : start + batch])
        return
    sql = _values_insert_sql(model, connection.vendor)
    with connection.cursor() as cursor:
        for start in range(0, len(rows), batch):
            cursor.executemany(sql, rows[start : start + batch])


def _unobserved_in_transaction(connection: BaseDatabaseWrapper) -> bool:
    """Whether a statement may skip Django's cursor: the connection is open inside an atomic block that
    can still run statements, and nothing watches its statements (no query log, as a test counting them
    keeps, no execute wrapper)."""
    return (
        connection.in_atomic_block
        and connection.connection is not None
        and not connection.needs_rollback
        and not connection.queries_logged
        and not connection.execute_wrappers
    )


@dataclass(frozen=True)
class SelectColumns:
    """The select list of a hand-built read, and the conversions the ORM would apply to its values.

    A hot read (one a chat request makes every time) spends more in the ORM's query building and
    compilation than in the database: its SQL is built once from the models here, and each row goes
    through the same converters a ``values_list`` applies (datetimes kept as text on SQLite, JSON).
    """

    sql: str
    converters: tuple[tuple[int, tuple[Callable[..., Any], ...], Col], ...]

    def row(self, values: Sequence[Any], connection: BaseDatabaseWrapper) -> tuple[Any, ...]:
        converted = list(values)
        for position, functions, expression in self.converters:
            value = converted[position]
            for function in functions:
                value = function(value, expression, connection)
            converted[position] = value
        return tuple(converted)


def select_columns(columns: Sequence[tuple[str, type[Model], str]]) -> SelectColumns:
    """``columns``: (table alias, model, field name) in select order."""
    connection = database()
    quote = connection.ops.quote_name
    parts, converters = [], []
    for position, (alias, model, name) in enumerate(columns):
        field = model_field(model, name)
        parts.append(f"{quote(alias)}.{quote(str(field.column))}")
        expression = Col(alias, field)
        functions = (*connection.ops.get_db_converters(expression), *field.get_db_converters(connection))
        if functions:
            converters.append((position, tuple(functions), expression))
    return SelectColumns(sql=", ".join(parts), converters=tuple(converters))


def select_rows(sql: str, params: Sequence[Any], columns: SelectColumns) -> list[tuple[Any, ...]]:
    """Run a hand-built read on the default connection; its rows converted as ``values_list`` would."""
    connection = database()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [columns.row(row, connection) for row in cursor.fetchall()]


_M = TypeVar("_M", bound=Model)


@functools.cache
def _instance_read(model: type[Model], by: str, vendor: str) -> tuple[str, SelectColumns, tuple[str, ...]]:
    fields = model._meta.concrete_fields
    columns = select_columns([("t", model, field.name) for field in fields])
    quote = database().ops.quote_name
    where = f"{quote('t')}.{quote(column(model, by))}"
    sql = f"SELECT {columns.sql} FROM {table(model)} {quote('t')} WHERE {where} = %s"
    return sql, columns, tuple(field.attname for field in fields)


def instance_get(model: type[_M], *, by: str, value: Any) -> _M | None:
    """The one ``model`` row whose unique field ``by`` equals ``value``, as a model instance with every
    concrete field loaded (None when there is none): ``Model.objects.filter(by=value).first()`` for a
    hot read, without building and compiling the query each time."""
    connection = database()
    sql, columns, attnames = _instance_read(model, by, connection.vendor)
    rows = select_rows(sql, [value], columns)
    return model.from_db(connection.alias, attnames, rows[0]) if rows else None


def instances_get(model: type[_M], *, pks: Sequence[Any]) -> list[_M]:
    """The ``model`` rows with these primary keys, every concrete field loaded: ``instance_get`` for a
    few rows at once (the history snapshots each row a write reports, on that write's path)."""
    if not pks:
        return []
    connection = database()
    sql, columns, attnames = _instance_read(model, model._meta.pk.name, connection.vendor)
    wanted = list(dict.fromkeys(pks))
    sql = sql.removesuffix("= %s") + f"IN ({', '.join(['%s'] * len(wanted))})"
    return [model.from_db(connection.alias, attnames, row) for row in select_rows(sql, wanted, columns)]


def table(model: type[Model]) -> str:
    """The quoted table of ``model``."""
    return database().ops.quote_name(model._meta.db_table)


def datetime_param(value: datetime) -> Any:
    """A datetime as the ORM passes it in a lookup (text on SQLite, as it is stored there)."""
    return database().ops.adapt_datetimefield_value(value)
