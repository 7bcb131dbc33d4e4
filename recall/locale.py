"""Localised text of the working context (zh and en)."""

from __future__ import annotations

STRINGS: dict[str, dict[str, str]] = {
    "zh": {
        "persona_header": "\n======{name}的长期记忆======\n",
        "inner_thoughts_header": "======{name}的内心活动======",
        # Wire format, word for word: the chat server splits /new_dialog at the end of this sentence.
        "inner_thoughts": "现在时间是{time}。开始聊天前，{name}又在脑海内整理了近期发生的事情。",
        "system_label": "SYSTEM",
        "gap": "距离上次与{master}聊天已经过去了{elapsed}。",
        "gap_now": "现在的时间是{time}。",
        "gap_long": "{name}意识到已经很久没有和{master}说话了，有点想知道{master}最近过得怎么样。",
        "holiday": "今天是{holiday}。",
        "days": "{n}天",
        "hours": "{n}小时",
        "minutes": "{n}分钟",
        "join": "",
    },
    "en": {
        "persona_header": "\n======{name}'s long-term memory======\n",
        "inner_thoughts_header": "======{name}'s inner thoughts======",
        # Wire format, word for word: the chat server splits /new_dialog at the end of this sentence.
        "inner_thoughts": "The current time is {time}. Before the conversation begins, {name} is mentally "
        "reviewing recent events.",
        "system_label": "SYSTEM",
        "gap": "It has been {elapsed} since the last chat with {master}.",
        "gap_now": "The current time is {time}.",
        "gap_long": "{name} realises it has been a long time since talking with {master}, "
        "and wonders how {master} has been.",
        "holiday": "Today is {holiday}.",
        "days": "{n} days",
        "hours": "{n} hours",
        "minutes": "{n} minutes",
        "join": " ",
    },
}

# Fixed-date holidays only; lunar-calendar ones (春节, 中秋) need a calendar table we do not ship yet.
HOLIDAYS: dict[tuple[int, int], dict[str, str]] = {
    (1, 1): {"zh": "元旦", "en": "New Year's Day"},
    (2, 14): {"zh": "情人节", "en": "Valentine's Day"},
    (5, 1): {"zh": "劳动节", "en": "Labour Day"},
    (10, 1): {"zh": "国庆节", "en": "National Day"},
    (10, 31): {"zh": "万圣节", "en": "Halloween"},
    (12, 24): {"zh": "平安夜", "en": "Christmas Eve"},
    (12, 25): {"zh": "圣诞节", "en": "Christmas Day"},
}


def text(language: str, key: str, **values: object) -> str:
    return STRINGS.get(language, STRINGS["en"])[key].format(**values)


def elapsed_text(language: str, seconds: float) -> str:
    minutes_total = int(seconds // 60)
    days, rest = divmod(minutes_total, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = []
    if days:
        parts.append(text(language, "days", n=days))
    if hours:
        parts.append(text(language, "hours", n=hours))
    if minutes or not parts:
        parts.append(text(language, "minutes", n=minutes))
    return text(language, "join").join(parts)
