"""Reads of the recall layer; import from here.

- ``pools``: the candidate pools of one character, the raw turns fact extraction has not covered, and
  the character row the hot path reads.
- ``working_context``: the working context of a new LLM session (``/new_dialog``, the MCP tool).

``parse_time_window`` (``recall.times``) is re-exported: the MCP forget tool reads a time expression
the way a recall query does.
"""

from recall.selectors.pools import (
    NOT_READ,
    RAW_TURN_POOL,
    RAW_TURN_TIER,
    RECALL_POOLS,
    NotRead,
    PoolReader,
    RawLogMarks,
    RecallCharacter,
    character_forgotten_version,
    character_incarnation,
    character_memory_version,
    characters_with_unvectored_turns,
    fact_candidates,
    raw_log_marks,
    raw_turn_candidates,
    raw_turns_covered_through,
    raw_turns_needing_vectors,
    raw_turns_without_vectors,
    raw_turns_without_window,
    recall_character,
    recall_characters,
    recall_pools,
    recent_recall_characters,
    stored_vector,
)
from recall.selectors.working_context import working_context_render
from recall.times import TimeWindow, parse_time_window

__all__ = [
    "NOT_READ",
    "RAW_TURN_POOL",
    "RAW_TURN_TIER",
    "RECALL_POOLS",
    "NotRead",
    "PoolReader",
    "RawLogMarks",
    "RecallCharacter",
    "TimeWindow",
    "character_forgotten_version",
    "character_incarnation",
    "character_memory_version",
    "characters_with_unvectored_turns",
    "fact_candidates",
    "parse_time_window",
    "raw_log_marks",
    "raw_turn_candidates",
    "raw_turns_covered_through",
    "raw_turns_needing_vectors",
    "raw_turns_without_vectors",
    "raw_turns_without_window",
    "recall_character",
    "recall_characters",
    "recall_pools",
    "recent_recall_characters",
    "stored_vector",
    "working_context_render",
]
