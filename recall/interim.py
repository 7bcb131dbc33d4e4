"""Answers while a character's index is being built (after a large import, by the task cluster or a
build thread): the rows whose text holds one of the query's words, read from the database and ranked
by a small index of their own, so a query right after an import finds what was imported instead of
answering "nothing" until the build is done (~30 s at 100k rows).

Slower than the index (a substring scan of the pools: tens of milliseconds at 100k rows) and
narrower (only the rows that share a word with the query reach the vector path), for the seconds it
serves.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import reduce
from operator import or_

from django.db.models import Q

from facts.models import Fact
from nekomem.embeddings import VectorSpace
from recall.engine import LEXICAL_VIEWS, Candidate, RecallIndex
from recall.reflection_pool import reflection_candidates
from recall.selectors import fact_candidates, raw_turn_candidates
from recent.models import RawMessage

TERMS = 6  # the query's longest words looked for
ROWS = 400  # newest matching rows read per pool


def interim_terms(query: str, stop_names: Iterable[str]) -> list[str]:
    """The query's words as the lexical views see them, longest first (the rarest, usually)."""
    tokens = LEXICAL_VIEWS["words"](query, tuple(stop_names))
    words = {t for t in tokens if t.strip()}
    return sorted(words, key=lambda t: (-len(t), t))[:TERMS]


def interim_index(
    *, character_id: int, query: str, stop_names: Iterable[str], space: VectorSpace | None
) -> RecallIndex:
    """An index of the character's rows that hold one of the query's words (facts, uncovered raw turns)
    and of its reflections (a few hundred rows at most)."""
    names = tuple(stop_names)
    terms = interim_terms(query, names)
    candidates: list[Candidate] = []
    if terms:
        facts = Fact.with_subjects.filter(character_id=character_id).filter(
            reduce(or_, (Q(text__icontains=t) for t in terms))
        )
        fact_keys = list(facts.order_by("-pk").values_list("pk", flat=True)[:ROWS])
        # A raw message is JSON: its text is stored escaped to ASCII or as UTF-8, by the database.
        forms = {form for t in terms for form in (t, json.dumps(t)[1:-1])}
        turns = RawMessage.objects.filter(character_id=character_id).filter(
            reduce(or_, (Q(message__icontains=f) for f in forms))
        )
        turn_keys = list(turns.order_by("-pk").values_list("pk", flat=True)[:ROWS])
        if fact_keys:
            candidates += fact_candidates(character_id=character_id, space=space, keys=fact_keys)
        if turn_keys:
            candidates += raw_turn_candidates(character_id=character_id, space=space, keys=turn_keys)
    candidates += reflection_candidates(character_id=character_id, space=space)
    return RecallIndex(candidates, stop_names=names, dim=space.dim if space is not None else None)
