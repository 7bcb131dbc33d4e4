"""Property: for any sequence of changes, the history's ``as_of(T)`` is the state actually observed at T
(issue 49). Changes go through the layer's services and the history's own undo and rollback."""

from __future__ import annotations

import contextlib
import itertools
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from facts.models import Fact
from facts.services import fact_update
from facts.services.archive import fact_archive, fact_restore
from facts.services.history import FACTS_HISTORY
from history.selectors import layer_as_of
from history.services import NoSuchVersion, changes_undo, memory_rollback
from nekomem.characters.services import character_get_or_create
from nekomem.journal.causes import change_cause
from tests.history.support import facts_added, facts_state, moment

pytestmark = pytest.mark.django_db
_names = itertools.count()

STEP = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 9)),
    st.tuples(st.just("text"), st.integers(0, 9), st.integers(0, 9)),
    st.tuples(st.just("importance"), st.integers(0, 9), st.integers(1, 10)),
    st.tuples(st.just("archive"), st.integers(0, 9)),
    st.tuples(st.just("restore"), st.integers(0, 9)),
    st.tuples(st.just("undo"), st.integers(0, 9)),
    st.tuples(st.just("rollback"), st.integers(0, 9)),
)


def _apply(character_id: int, step: tuple[Any, ...], sources: list[str], moments: list[datetime]) -> None:
    facts = list(Fact.with_subjects.filter(character_id=character_id).order_by("pk"))
    kind, n = step[0], step[1]
    if kind == "add":
        sources.append(facts_added(character_id, f"阿凛的第{n}个爱好是{len(facts)}号", cause="extraction"))
        return
    if kind in ("undo", "rollback"):
        if kind == "undo" and sources:
            with contextlib.suppress(NoSuchVersion):  # a source whose rows were all rolled back already
                changes_undo(character_id=character_id, source=sources[n % len(sources)], force=True)
        if kind == "rollback" and moments:
            memory_rollback(character_id=character_id, at=moments[n % len(moments)])
        return
    if not facts:
        return
    fact = facts[n % len(facts)]
    with change_cause("refine") as source:
        if kind == "text":
            fact_update(character_id=character_id, fact_id=fact.fact_id, text=f"{fact.text}，改{step[2]}")
        elif kind == "importance":
            fact_update(character_id=character_id, fact_id=fact.fact_id, importance=step[2])
        elif kind == "archive":
            fact_archive(character_id=character_id, fact_id=fact.fact_id)
        else:
            fact_restore(character_id=character_id, fact_id=fact.fact_id)
    sources.append(source)


@hypothesis_settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(STEP, min_size=1, max_size=12))
def test_as_of_t_is_the_state_observed_at_t(steps):
    character = character_get_or_create(name=f"史{next(_names)}")
    observed: list[tuple[datetime, dict[str, dict[str, Any]]]] = []
    sources: list[str] = []
    for step in steps:
        _apply(character.pk, step, sources, [at for at, _ in observed])
        observed.append((moment(), facts_state(character.pk)))
    for at, state in observed:
        assert layer_as_of(character_id=character.pk, layer=FACTS_HISTORY, at=at) == state
