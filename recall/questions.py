"""What kind of question a recall query is, and what a memory says about its own time.

The patterns are per locale (``recall/locales/<code>.py``, ``QUESTIONS``); a query or a memory is read
with all eight joined, since neither says which language it is in and the scripts rarely collide.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from nekomem.language.tables import load_locale_tables


@cache
def _joined(key: str) -> re.Pattern[str]:
    tables = load_locale_tables("recall.locales", "QUESTIONS")
    return re.compile("|".join(f"(?:{table[key]})" for table in tables.values()), re.IGNORECASE)


def asks_when(query: str) -> bool:
    """A question about when something happened ("When did Caroline go to…?", "我们什么时候去的?")."""
    return bool(_joined("when").search(query))


@lru_cache(maxsize=65536)
def says_when(text: str) -> bool:
    """The memory says when it happened ("yesterday", "last Friday", "去年"): read with its own date
    (event time, the turn's timestamp) it answers a when-question."""
    return bool(_joined("time_words").search(text))


def without_question_words(query: str) -> str:
    """The query without the words it asks with ("what", "什么", "何"): they match the other questions of
    a conversation, not its answers. The query as it is when nothing else would be left."""
    rest = _joined("question_words").sub(" ", query)
    return rest if any(ch.isalnum() for ch in rest) else query
