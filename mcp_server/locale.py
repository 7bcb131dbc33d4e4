"""What the MCP tools tell the model when a request cannot be done, in the character's language."""

from __future__ import annotations

from typing import Any

STRINGS: dict[str, dict[str, str]] = {
    "zh": {
        "no_messages": "没有可记住的消息：messages 至少要有一条。",
        "query_or_time": "请给出 query 或 time（或两者）。",
        "not_found": "没有 id 为 {id} 的记忆（事实、反思或人设条目）。",
        "read_only": "记忆 {id} 来自角色卡，只能随角色卡修改。",
        "subject_or_time": "请给出 subject 或 time（或两者）。",
        "time_unreadable": "无法理解时间表达「{time}」。",
        "too_many": "匹配的记忆超过 {limit} 条；请把主题或时间范围说得更具体。",
    },
    "en": {
        "no_messages": "Nothing to remember: messages must hold at least one message.",
        "query_or_time": "Give a query or a time expression (or both).",
        "not_found": "There is no memory (fact, reflection or persona entry) with id {id}.",
        "read_only": "Memory {id} comes from the character card and only changes with the card.",
        "subject_or_time": "Give a subject or a time range (or both).",
        "time_unreadable": "The time expression {time!r} could not be read.",
        "too_many": "More than {limit} memories match; name the subject or the time range more narrowly.",
    },
}


def text(language: str, key: str, **values: Any) -> str:
    table = STRINGS.get(language) or STRINGS["en"]
    return table.get(key, STRINGS["en"][key]).format(**values)
