"""The hand-written recall sets of the six locales besides zh and en (tests/fixtures/recall_sets/).

Each set is ten short conversations between a master and the companion, three probes each; one probe per
conversation names a time ("先週", "지난주", "на прошлой неделе", "la semana pasada", "semana passada",
"上個月" …), so each conversation happened at a moment named relative to today (``anchor``): yesterday,
three days ago, last weekend, last week, two weeks ago, last month, three months ago, last year, a while
ago, and in May. A time probe is asked with its question as ``time`` as well: the expression is found
inside it, and recall filters by its window before ranking.

Read by ``tests/recall/test_locale_sets.py`` (a floor per locale) and ``bench/recall_eval.py`` (a table).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path

SETS_DIR = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "recall_sets"
LOCALES = ("ja", "ko", "ru", "es", "pt", "zh-TW")
TOP_K = 8


def _week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _month_back(day: date, months: int, on: int) -> date:
    index = day.year * 12 + day.month - 1 - months
    return date(index // 12, index % 12 + 1, on)


def anchor(name: str, today: date) -> datetime:
    """The local (naive) moment a conversation started, for a named anchor and today's date."""
    if name == "yesterday":
        return datetime.combine(today - timedelta(days=1), time(20))
    if name == "3_days_ago":
        return datetime.combine(today - timedelta(days=3), time(15))
    if name == "last_weekend":
        return datetime.combine(_week_start(today) - timedelta(days=2), time(14))
    if name == "last_week":
        return datetime.combine(_week_start(today) - timedelta(days=5), time(19))
    if name == "2_weeks_ago":
        return datetime.combine(_week_start(today) - timedelta(days=12), time(18))
    if name == "last_month":
        return datetime.combine(_month_back(today, 1, 10), time(19))
    if name == "3_months_ago":
        return datetime.combine(_month_back(today, 3, 15), time(11))
    if name == "last_year":
        return datetime.combine(date(today.year - 1, 6, 15), time(16))
    if name == "a_while_ago":
        return datetime.combine(today - timedelta(days=30), time(21))
    if name == "may":
        year = today.year if today.month >= 5 else today.year - 1
        return datetime.combine(date(year, 5, 1), time(10))
    raise ValueError(f"unknown anchor {name!r}")


@dataclass(frozen=True)
class Turn:
    conv: str
    index: int
    speaker: str
    text: str
    when: datetime  # local, naive

    @property
    def fact_text(self) -> str:
        return f"{self.speaker}: {self.text}"

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.conv}\0{self.index}\0{self.text}".encode()).hexdigest()

    @property
    def fact_id(self) -> str:
        return f"fact_{self.when:%Y%m%d%H%M%S}_{self.digest[:8]}"


@dataclass(frozen=True)
class Probe:
    conv: str
    question: str
    evidence: frozenset[int]
    timed: bool


@dataclass(frozen=True)
class LocaleSet:
    locale: str
    turns: list[Turn]
    probes: list[Probe]

    def evidence_ids(self, probe: Probe) -> set[str]:
        return {t.fact_id for t in self.turns if t.conv == probe.conv and t.index in probe.evidence}

    def anchor_of(self, conv: str) -> datetime:
        return min(t.when for t in self.turns if t.conv == conv)

    def facts(self) -> list[dict]:
        """The turns as facts in the original ``facts.json`` shape (one fact per turn, like the dev sets)."""
        return [
            {
                "id": t.fact_id,
                "text": t.fact_text,
                "importance": 5,
                "entity": "master" if t.index % 2 == 0 else "neko",
                "source": "user_observation",
                "tags": ["external_import", "bench"],
                "hash": t.digest[:16],
                "created_at": t.when.isoformat(),
                "event_when_raw": None,
                "event_start_at": t.when.isoformat(),
                "event_end_at": None,
                "schema_version": 2,
                "absorbed": False,
                "signal_processed": True,
            }
            for t in self.turns
        ]


def load(locale: str, *, today: date) -> LocaleSet:
    raw = json.loads((SETS_DIR / f"{locale}.json").read_text(encoding="utf-8"))
    speakers = (raw["master"], raw["companion"])
    turns = []
    for conv in raw["conversations"]:
        start = anchor(conv["anchor"], today)
        for index, text in enumerate(conv["turns"]):
            turns.append(Turn(conv["id"], index, speakers[index % 2], text, start + timedelta(minutes=index)))
    probes = [
        Probe(p["conv"], p["question"], frozenset(p["evidence"]), bool(p.get("time"))) for p in raw["probes"]
    ]
    return LocaleSet(locale, turns, probes)


def probe_body(probe: Probe) -> dict[str, str]:
    """The ``/query_memory`` body of a probe: a time probe passes its question as ``time`` too."""
    return {"query": probe.question, "time": probe.question} if probe.timed else {"query": probe.question}
