"""Simplified Chinese."""

TEXT = {
    "no_messages": "没有可记住的消息：messages 至少要有一条。",
    "query_or_time": "请给出 query 或 time（或两者）。",
    "not_found": "没有 id 为 {id} 的记忆（事实、反思或人设条目）。",
    "read_only": "记忆 {id} 来自角色卡，只能随角色卡修改。",
    "subject_or_time": "请给出 subject 或 time（或两者）。",
    "time_unreadable": "无法理解时间表达「{time}」。",
    "too_many": "匹配的记忆超过 {limit} 条；请把主题或时间范围说得更具体。",
}
