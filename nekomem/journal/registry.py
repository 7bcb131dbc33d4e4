"""Where layers plug their handlers into the kernel's event log and outbox.

The kernel imports no layer: each layer registers its event handlers, outbox steps, job kinds
(``nekomem.journal.jobs.register_job_kind``) and schedules from a ``register()`` function that its
AppConfig.ready() calls, so importing a module never registers anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from nekomem.journal.events import check_event_type
from nekomem.subjects import subject_key_from_extra

# An event handler re-applies a snapshot payload to the character's views; it must be idempotent.
EventHandler = Callable[[int, dict[str, Any]], None]
# An outbox step does one part of an op for a character. An op type may have several steps (the
# post-turn op gains one per layer); they run in registration order and the op is done when all of
# them succeeded. A step that succeeded is recorded with an op that stopped short and is skipped by
# its retries, so a count runs once; only a worker that dies between steps runs one again, so a step
# must still tolerate at-least-once delivery.
OutboxStep = Callable[[int, dict[str, Any]], None]


# The op every finished chat turn registers; each layer adds its own steps to it. The original's
# wire name, kept although the op does more than extract facts.
POST_TURN_OP = "extract_facts"
# A step that cannot run yet (no LLM provider) raises nekomem.journal.jobs.JobWait: the op waits
# with the reason shown, and no attempt is counted.


# An event seeder yields (event type, payload) snapshots of one character's current views, which
# compaction writes in place of the events it drops; replaying them onto those views changes nothing.
EventSeeder = Callable[[int], Iterable[tuple[str, dict[str, Any]]]]

# A raw-turns hook hears, in the process that wrote them, that a character's chat turns were committed
# to the raw log (recall embeds them at once instead of at the backfill's next tick). Best effort: it
# must only hand the id on, and a turn it misses is still found by the backfill's schedule.
RawTurnsHook = Callable[[int], None]

_event_handlers: dict[str, EventHandler] = {}
_raw_turns_hooks: dict[str, RawTurnsHook] = {}
_outbox_steps: dict[str, list[tuple[str, OutboxStep]]] = {}
_event_seeders: dict[str, EventSeeder] = {}
# The ids of a character's rows that still exist in one layer: compaction keeps the last versions of
# each of them in the journal past the history's retention (a forgotten row keeps none).
LiveRows = Callable[[int], Iterable[str]]
_live_rows: dict[str, LiveRows] = {}


def register_live_rows(layer: str, rows: LiveRows) -> None:
    """``layer`` is the prefix of the layer's event types (``fact``, ``reflection``, ``persona``)."""
    _live_rows[layer] = rows


def live_row_keys(character_id: int) -> set[str]:
    """``<layer>:<id>`` of every live row of the character, the keys ``event_row_keys`` gives."""
    return {f"{layer}:{row_id}" for layer, rows in _live_rows.items() for row_id in rows(character_id)}


def event_row_keys(event_type: str, payload: dict[str, Any]) -> list[str]:
    """The rows one event is a version of, as ``<layer>:<id>`` (none for a queued correction)."""
    layer = event_type.split(".", 1)[0]
    ids: list[Any] = []
    if layer == "fact":
        ids = [payload.get("id"), *(payload.get("fact_ids") or [])]
    elif layer == "reflection":
        ids = [payload.get("id"), payload.get("reflection_id")]
    elif layer == "persona":
        entry = payload.get("entry")
        ids = [entry.get("id") if isinstance(entry, dict) else None, payload.get("entry_id")]
    return sorted({f"{layer}:{row_id}" for row_id in ids if isinstance(row_id, str) and row_id})


def register_event_seeder(name: str, seeder: EventSeeder) -> None:
    _event_seeders[name] = seeder


def event_seeders() -> list[EventSeeder]:
    return [seeder for _, seeder in sorted(_event_seeders.items())]


def register_event_handler(event_type: str, handler: EventHandler) -> None:
    _event_handlers[check_event_type(event_type)] = handler


def event_handler_for(event_type: str) -> EventHandler | None:
    return _event_handlers.get(event_type)


def register_outbox_step(op_type: str, name: str, step: OutboxStep) -> None:
    """Add (or replace, by name) one step of an op type."""
    steps = [(n, s) for n, s in _outbox_steps.get(op_type, []) if n != name]
    steps.append((name, step))
    _outbox_steps[op_type] = steps


def outbox_steps_for(op_type: str) -> list[tuple[str, OutboxStep]]:
    return list(_outbox_steps.get(op_type, []))


def unregister_outbox_step(op_type: str, name: str) -> None:
    _outbox_steps[op_type] = [(n, s) for n, s in _outbox_steps.get(op_type, []) if n != name]


# --- history (issue 49): how each layer's rows are read into versions and put back -----------------------


@dataclass(frozen=True)
class HistoryLayer:
    """A layer's rows as the kernel's history sees them, registered from the layer's AppConfig.ready().

    ``fields`` are a row's state as a plain JSON object (its file entry, without the vector, plus what only
    the database keeps, such as whether it is archived); a version stores them, and ``restore`` puts them
    back. The kernel never looks inside ``fields`` except for ``text_key``: a version whose text is blank
    was forgotten and is never restored.
    """

    name: str  # the REST segment and ``Event.layer``: facts, reflections, persona
    pool: str  # the memory-change pool its services report changes under
    # The rows with these primary keys that still exist: pk -> (public id, fields).
    snapshots: Callable[[int, Sequence[int]], dict[int, tuple[str, dict[str, Any]]]]
    # Every row of the character: public id -> (pk, fields) (the as-of read starts from them).
    current: Callable[[int], dict[str, tuple[int, dict[str, Any]]]]
    # Put the row back to ``fields`` (creating it under its old primary key when it is gone).
    restore: Callable[[int, int, dict[str, Any]], None]
    # Take a row out of the live memory without losing it (a row an undo or a rollback unmakes).
    archive: Callable[[int, str], None]
    text_key: str = "text"
    # Every key of ``fields`` that holds the row's text: a forgetting blanks them in every version.
    forget_keys: tuple[str, ...] = ("text",)
    # The group-chat subject a version's row belongs to ("" the master's private memory): the as-of
    # read filters by it as the layer's list route does.
    subject_of: Callable[[dict[str, Any]], str] = subject_key_from_extra
    # A row instance the writing service holds as it saved it -> (public id, fields), exactly what
    # ``snapshots`` would read back; with ``row_type``, the version skips that read for such rows.
    held_snapshot: Callable[[Any], tuple[str, dict[str, Any]]] | None = None
    # The model of the rows: an import reserves keys in its table for the versions of deleted rows.
    row_type: type | None = None
    # (character, row id) -> the row's primary key, for a layer whose keys do not come from a table's
    # sequence (the memo's is its character's): what an import names the versions of such a row by, there
    # or not, so they stay restorable in the database they were imported into.
    row_key: Callable[[int, str], int] | None = None


_history_layers: dict[str, HistoryLayer] = {}


def register_history_layer(layer: HistoryLayer) -> None:
    _history_layers[layer.name] = layer


def history_layers() -> list[HistoryLayer]:
    return [layer for _, layer in sorted(_history_layers.items())]


def history_layer(name: str) -> HistoryLayer | None:
    return _history_layers.get(name)


def history_layer_for_pool(pool: str) -> HistoryLayer | None:
    return next((layer for layer in _history_layers.values() if layer.pool == pool), None)


def register_raw_turns_hook(name: str, hook: RawTurnsHook) -> None:
    """Add (or replace, by name) a hook told of each committed chat turn's raw-log rows."""
    _raw_turns_hooks[name] = hook


def raw_turns_hooks() -> list[RawTurnsHook]:
    return list(_raw_turns_hooks.values())
