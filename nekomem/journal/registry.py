"""Where layers plug their handlers into the kernel's event log and outbox.

The kernel imports no layer: each layer registers its event handlers, outbox steps, job kinds
(``nekomem.journal.jobs.register_job_kind``) and schedules from a ``register()`` function that its
AppConfig.ready() calls, so importing a module never registers anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from nekomem.journal.events import check_event_type

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


def register_raw_turns_hook(name: str, hook: RawTurnsHook) -> None:
    """Add (or replace, by name) a hook told of each committed chat turn's raw-log rows."""
    _raw_turns_hooks[name] = hook


def raw_turns_hooks() -> list[RawTurnsHook]:
    return list(_raw_turns_hooks.values())
