"""English."""

TEXT = {
    "persona_header": "\n======{name}'s long-term memory======\n",
    # Wire format, word for word (reference §5.1).
    "inner_thoughts_header": "\n\n======{name}'s Inner Thoughts======\n",
    "inner_thoughts": "The current time is {time}. Before the conversation begins, {name} is mentally "
    "reviewing recent events.",
    "system_label": "SYSTEM",
    "gap": "It has been {elapsed} since the last chat with {master}.",
    "gap_now": "The current time is {time}.",
    "gap_long": "{name} realises it has been a long time since talking with {master}, "
    "and wonders how {master} has been.",
    "holiday": "Today is {holiday}.",
    "holiday_join": " and ",
    "elapsed": {
        "days": {"one": "{n} day", "few": "{n} days", "many": "{n} days", "other": "{n} days"},
        "hours": {"one": "{n} hour", "few": "{n} hours", "many": "{n} hours", "other": "{n} hours"},
        "minutes": {"one": "{n} minute", "few": "{n} minutes", "many": "{n} minutes", "other": "{n} minutes"},
    },
    "elapsed_join": " ",
    "recall_header": "Memories related to this query:",
    "recall_none": "No relevant memories found.",
    "recall_loosen": "Nothing matched both the query and the time; try again with only one of them.",
    "today": "today",
    "days_ago": {
        "one": "{n} day ago",
        "few": "{n} days ago",
        "many": "{n} days ago",
        "other": "{n} days ago",
    },
    "in_days": {"one": "in {n} day", "few": "in {n} days", "many": "in {n} days", "other": "in {n} days"},
    "tier": {
        "fact": "fact",
        "reflection": "reflection",
        "fact_archive": "old fact",
        "persona": "persona",
        "raw_turn": "said",
    },
    "entity": {"master": "about master", "neko": "about self", "relationship": "relationship"},
    "search_placeholder": "======{name} tries to remember======\n{query}\n\n"
    "(Semantic memory is offline on this route; use POST /query_memory/{name}.)",
}

HOLIDAYS = {
    "01-01": "New Year's Day",
    "02-14": "Valentine's Day",
    "03-17": "St. Patrick's Day",
    "05-01": "May Day",
    "07-04": "Independence Day",
    "10-31": "Halloween",
    "12-24": "Christmas Eve",
    "12-25": "Christmas Day",
    "12-31": "New Year's Eve",
}

# Regular expressions (case-insensitive) recall reads questions and memories with: ``when`` — a question
# that asks when something happened; ``time_words`` — a memory that says when it happened (read with its
# own date, it answers such a question); ``question_words`` — the words a question asks with, taken out
# of a query before its words are matched (they match other questions, not the answers).
# ``recall.questions`` joins the eight locales' patterns.
QUESTIONS = {
    "question_words": r"\b(what|when|where|who|whom|whose|which|why|how)\b",
    "when": (
        r"^\W*when\b|\bwhen (did|was|is|will|do|does|has|have|were|are|had)\b|"
        r"\bwhat (date|day|year|month)\b|\bhow long ago\b"
    ),
    "time_words": (
        r"\b(yesterday|today|tonight|tomorrow|ago|recently|lately|weekend|the other day|"
        r"last (night|week|month|year|time|monday|tuesday|wednesday|thursday|friday|"
        r"saturday|sunday|spring|summer|fall|autumn|winter)|next (week|month|year)|"
        r"this (morning|afternoon|evening|week|month|year|past)|(on|in|since|until|"
        r"by) (monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|"
        r"march|april|june|july|august|september|october|november|december)|\d\d\d\d)\b"
    ),
}
