"""Answers while a character's index is being built (after a large import, by the task cluster or a
build thread): the rows whose text holds one of the query's words, read from the database and ranked
by a small index of their own, so a query right after an import finds what was imported instead of
answering "nothing" until the build is done (~30 s at 100k rows).

Slower than the index (a substring scan of the pools: tens of milliseconds at 100k rows) and
narrower (only the rows that share a word with the query reach the vector path), for the seconds it
serves.

The scan looks for words as stored text writes them, not as the lexical views fold them: a stem
("carolin", "appli") or a CJK 3-gram across two words ("号这天") is often no substring of any row,
and the interim answer was empty where the built index had results.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import reduce
from operator import or_

from django.db import connections
from django.db.models import BooleanField, F, Func, Q, QuerySet, Value

from facts.models import Fact
from nekomem.embeddings import VectorSpace
from nekomem.language import stemming
from nekomem.language.normalize import CJK_CLASS, fold_diacritics, to_simplified, to_traditional
from nekomem.language.tokens import ENGLISH_STOP_WORDS
from recall.engine import Candidate, RecallIndex
from recall.reflection_pool import reflection_candidates
from recall.selectors import fact_candidates, raw_turn_candidates
from recent.models import RawMessage

TERMS = 6  # the query's words looked for first (each with its script and case variants)
ROWS = 400  # newest matching rows read per pool
# Fewer rows than this from the query's content words: its other words are looked for too (a word start
# such as "pet" in "petals" is no word of the row, and the built index also matches function words).
FEW_ROWS = ROWS // 4

_CJK_RUN_RE = re.compile(rf"[{CJK_CLASS}]+")
_WORD_RE = re.compile(rf"[^\W_{CJK_CLASS}]+")
_HIRAGANA_RE = re.compile(r"[\u3040-\u309f]")
# Characters most Chinese sentences hold: a 2-gram made of them finds rows that share no topic.
_COMMON_HAN = frozenset(
    "的了是我你他她它们在有和就不也都这那么什哪吗呢吧啊过个一些给要会对很说去来到着把被让从为号月日年天"
)


@dataclass(frozen=True)
class InterimTerms:
    """Substrings to look for: ``first`` the query's content words as stored text writes them (the
    rarest first), ``then`` its other words, read only when ``first`` finds few rows. A function word
    the query capitalises ("Is", "What") is in ``then`` as written, and in ``cased``: the lexical views
    drop it folded and keep it only in the case it was written, so only rows writing it so can match."""

    first: list[str]
    then: list[str]
    cased: frozenset[str] = frozenset()


def _common_chars(gram: str) -> int:
    return sum(ch in _COMMON_HAN or _HIRAGANA_RE.match(ch) is not None for ch in gram)


def _cjk_words(text: str) -> list[str]:
    """A CJK run's 2-grams (or the lone character), those of uncommon characters first: the lexical
    views' 3-grams often span two words and occur nowhere in the stored text."""
    grams: list[tuple[int, int, str]] = []
    for run in _CJK_RUN_RE.findall(text):
        if len(run) == 1:
            grams.append((_common_chars(run), len(grams), run))
        grams += [
            (_common_chars(run[i : i + 2]), len(grams) + i, run[i : i + 2]) for i in range(len(run) - 1)
        ]
    return [gram for _, _, gram in sorted(grams)]


def _stored_form(word: str, language: str) -> str | None:
    """The part of a lower-case word a stored row holds whatever its ending (the longest prefix it
    shares with its stem: "apply" → "appl"), or ``None`` for a function word."""
    stems = () if word in ENGLISH_STOP_WORDS else stemming.terms(fold_diacritics(word), language)
    if not stems:
        return None
    prefix = min((_shared_prefix(word, s) for s in stems), key=len)
    return prefix if len(prefix) >= 3 else word


def _shared_prefix(word: str, stem: str) -> str:
    n = 0
    while n < min(len(word), len(stem)) and word[n] == stem[n]:
        n += 1
    return word[:n]


def interim_terms(query: str, stop_names: Iterable[str]) -> InterimTerms:
    """The query's words as a row writes them: Latin and Cyrillic words lower-cased, cut to the part
    their stem keeps; CJK 2-grams; names of the character left out."""
    text = unicodedata.normalize("NFKC", query)
    for name in sorted({n for n in stop_names if n}, key=len, reverse=True):
        text = text.replace(name, " ")
    written = [w for w in _WORD_RE.findall(text) if len(w) >= 2 or w.isdigit()]
    words = [w.lower() for w in written]
    text = text.lower()
    language = stemming.latin_language([fold_diacritics(w) for w in words], raw_text=query)
    content: list[str] = []
    function: list[str] = []
    cased: set[str] = set()
    for word, as_written in dict.fromkeys(zip(words, written, strict=True)):
        form = _stored_form(word, language)
        if form is not None:
            content.append(form)
        elif as_written != word:
            function.append(as_written)
            cased.add(as_written)
        else:
            function.append(word)
    content.sort(key=lambda w: (-len(w), w))
    grams = _cjk_words(text)
    # Latin words and CJK 2-grams share the budget, taken in turn so a mixed query keeps both.
    ranked = list(dict.fromkeys(_alternate(content, grams)))
    then = list(dict.fromkeys(ranked[TERMS:] + function))[:TERMS]
    return InterimTerms(first=ranked[:TERMS], then=then, cased=frozenset(cased) & set(then))


def _alternate(left: list[str], right: list[str]) -> list[str]:
    out: list[str] = []
    for i in range(max(len(left), len(right))):
        out += left[i : i + 1] + right[i : i + 1]
    return out


class _Glob(Func):
    """SQLite's case-sensitive pattern match (its LIKE folds ASCII case): ``field GLOB pattern``."""

    arg_joiner = " GLOB "
    template = "(%(expressions)s)"
    output_field = BooleanField()


def _glob_literal(text: str) -> str:
    return "".join(f"[{ch}]" if ch in "*?[" else ch for ch in text)


def _cased_filter(field: str, term: str, *, escaped: bool, vendor: str) -> Q:
    """Rows writing a word as the query does, in that case, where a word starts."""
    starts = ('"', " ") if escaped else ("", " ")
    forms = {term, json.dumps(term)[1:-1]} if escaped else {term}
    if vendor != "sqlite":  # LIKE keeps case on PostgreSQL
        lookups = [
            Q(**{f"{field}__contains": start + form}) if start else Q(**{f"{field}__startswith": form})
            for form in forms
            for start in starts
        ]
        return reduce(or_, lookups)
    patterns = [
        f"*{start}{_glob_literal(form)}*" if start else f"{_glob_literal(form)}*"
        for form in forms
        for start in starts
    ]
    return reduce(or_, (Q(_Glob(F(field), Value(pattern))) for pattern in patterns))


def _term_filter(field: str, term: str, *, escaped: bool) -> Q:
    """Rows holding a term in both Chinese scripts and, outside ASCII (which SQLite's LIKE folds alone),
    capitalised; escaped as JSON too for the raw log (stored as ASCII escapes or UTF-8, by the
    database). A word is looked for where a word starts: "pet" in "pets", not in "compete"."""
    forms = {term, to_simplified(term), to_traditional(term)}
    if not term.isascii():
        forms.add(term.capitalize())
    if escaped:
        forms |= {json.dumps(form)[1:-1] for form in forms}
    if _CJK_RUN_RE.search(term):
        lookups = [(f"{field}__icontains", form) for form in forms]
    elif escaped:  # a message's text starts after the quote of its JSON string
        lookups = [(f"{field}__icontains", start + form) for form in forms for start in ('"', " ")]
    else:
        lookups = [(f"{field}__{how}", f"{start}{form}") for form in forms for how, start in _WORD_STARTS]
    return reduce(or_, (Q(**{lookup: value}) for lookup, value in lookups))


_WORD_STARTS = (("istartswith", ""), ("icontains", " "))


def _newest_keys(rows: QuerySet, field: str, terms: InterimTerms, *, escaped: bool) -> list[int]:
    """The newest rows holding a ``first`` term, filled up to ``FEW_ROWS`` with rows holding a ``then``
    one (a filler each row of which costs as much in the index as a match)."""
    keys: list[int] = []
    vendor = connections[rows.db].vendor
    for group, limit in ((terms.first, ROWS), (terms.then, FEW_ROWS)):
        if not group or len(keys) >= limit:
            continue
        matching = rows.filter(
            reduce(
                or_,
                (
                    _cased_filter(field, term, escaped=escaped, vendor=vendor)
                    if term in terms.cased
                    else _term_filter(field, term, escaped=escaped)
                    for term in group
                ),
            )
        )
        if keys:
            matching = matching.exclude(pk__in=keys)
        keys += matching.order_by("-pk").values_list("pk", flat=True)[: limit - len(keys)]
    return keys


def interim_index(
    *, character_id: int, query: str, stop_names: Iterable[str], space: VectorSpace | None
) -> RecallIndex:
    """An index of the character's rows that hold one of the query's words (facts, uncovered raw turns)
    and of its reflections (a few hundred rows at most)."""
    names = tuple(stop_names)
    terms = interim_terms(query, names)
    candidates: list[Candidate] = []
    facts = Fact.with_subjects.filter(character_id=character_id)
    fact_keys = _newest_keys(facts, "text", terms, escaped=False)
    turns = RawMessage.objects.filter(character_id=character_id)
    turn_keys = _newest_keys(turns, "message", terms, escaped=True)
    if fact_keys:
        candidates += fact_candidates(character_id=character_id, space=space, keys=fact_keys)
    if turn_keys:
        candidates += raw_turn_candidates(character_id=character_id, space=space, keys=turn_keys)
    candidates += reflection_candidates(character_id=character_id, space=space)
    return RecallIndex(candidates, stop_names=names, dim=space.dim if space is not None else None)
