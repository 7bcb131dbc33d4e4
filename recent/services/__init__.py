"""Writes of the recent layer, split by subject; import from here.

- ``turns``: ``turn_record``, what the conversation routes call for a finished turn.
- ``turn_write``: the turn's write itself, through the ORM and as hand-built statements (the hot path).
- ``window``: window positions, appends and the memory browser's whole-window save.
- ``raw_log``: the raw time-indexed log.
- ``forgetting``: a time range of the raw log forgotten, with its copies.
- ``idle``: idle maintenance (compress and review characters that stopped chatting).
"""

from recent.services.forgetting import RangeRefused, raw_log_forget, raw_log_range_check
from recent.services.idle import idle_maintenance_run
from recent.services.raw_log import raw_log_append
from recent.services.turns import CompressMode, TurnRecorded, turn_record
from recent.services.window import (
    MAX_MESSAGE_CHARS,
    MAX_WINDOW_CHARS,
    MAX_WINDOW_MESSAGES,
    WindowChanged,
    recent_messages_append,
    recent_window_replace,
)

__all__ = [
    "MAX_MESSAGE_CHARS",
    "MAX_WINDOW_CHARS",
    "MAX_WINDOW_MESSAGES",
    "CompressMode",
    "RangeRefused",
    "TurnRecorded",
    "WindowChanged",
    "idle_maintenance_run",
    "raw_log_append",
    "raw_log_forget",
    "raw_log_range_check",
    "recent_messages_append",
    "recent_window_replace",
    "turn_record",
]
