"""Property: for any sequence of changes to reflections, persona entries and the corrections queue (and
undos and rollbacks of them), ``as_of(T)`` of each layer is the state actually observed at T (issue 49).
Changes go through the layers' own services, as a person or a machine makes them."""

from __future__ import annotations

import contextlib
import itertools
from datetime import datetime
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from history.selectors import layer_as_of
from history.services import NoSuchVersion, changes_undo, history_baseline, memory_rollback
from nekomem.characters.services import character_get_or_create
from nekomem.errors import Conflict
from nekomem.journal.causes import change_cause
from nekomem.journal.registry import history_layer
from persona.models import PersonaEntry
from persona.services import persona_entry_create, persona_entry_edit
from persona.services.entries import correction_enqueue
from reflections.models import Reflection
from reflections.services import reflection_archive, reflection_confirm, reflection_deny, reflection_edit
from reflections.services.archive import reflection_restore
from tests.history.support import moment
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db
_names = itertools.count()
LAYERS = ("reflections", "persona", "corrections")

STEP = st.one_of(
    st.tuples(st.just("persona_add"), st.integers(0, 9)),
    st.tuples(st.just("persona_edit"), st.integers(0, 9), st.integers(0, 9)),
    st.tuples(st.just("correction"), st.integers(0, 9), st.integers(0, 9)),
    st.tuples(st.just("reflection_edit"), st.integers(0, 9), st.integers(0, 9)),
    st.tuples(st.just("confirm"), st.integers(0, 9)),
    st.tuples(st.just("deny"), st.integers(0, 9)),
    st.tuples(st.just("archive"), st.integers(0, 9)),
    st.tuples(st.just("restore"), st.integers(0, 9)),
    st.tuples(st.just("undo"), st.integers(0, 9)),
    st.tuples(st.just("rollback"), st.integers(0, 9)),
)


def _state(character_id: int) -> dict[str, dict[str, dict[str, Any]]]:
    return {
        name: {row: fields for row, (_, fields) in layer.current(character_id).items()}
        for name in LAYERS
        if (layer := history_layer(name)) is not None
    }


def _as_of(character_id: int, at: datetime) -> dict[str, dict[str, dict[str, Any]]]:
    return {
        name: layer_as_of(character_id=character_id, layer=layer, at=at)
        for name in LAYERS
        if (layer := history_layer(name)) is not None
    }


def _apply(character_id: int, step: tuple[Any, ...], sources: list[str], moments: list[datetime]) -> None:
    kind, n = step[0], step[1]
    if kind in ("undo", "rollback"):
        if kind == "undo" and sources:
            with contextlib.suppress(NoSuchVersion):
                changes_undo(character_id=character_id, source=sources[n % len(sources)], force=True)
        if kind == "rollback" and moments:
            memory_rollback(character_id=character_id, at=moments[n % len(moments)])
        return
    entries = list(PersonaEntry.with_subjects.filter(character_id=character_id).order_by("pk"))
    reflections = list(Reflection.with_subjects.filter(character_id=character_id).order_by("pk"))
    with change_cause("edit") as source, contextlib.suppress(Conflict, ValueError):
        if kind == "persona_add":
            persona_entry_create(
                character_id=character_id, entity="master", text=f"主人的第{n}个习惯是{len(entries)}"
            )
        elif kind == "persona_edit" and entries:
            entry = entries[n % len(entries)]
            persona_entry_edit(
                character_id=character_id, entry_id=entry.entry_id, text=f"{entry.text}，改{step[2]}"
            )
        elif kind == "correction" and entries:
            entry = entries[n % len(entries)]
            with transaction.atomic():
                correction_enqueue(
                    character_id=character_id,
                    old_text=entry.text,
                    new_text=f"{entry.text}，其实是{step[2]}",
                    entity=entry.section,
                    now=timezone.now(),
                )
        elif reflections:
            reflection = reflections[n % len(reflections)]
            key = reflection.reflection_id
            if kind == "reflection_edit":
                reflection_edit(
                    character_id=character_id, reflection_id=key, text=f"{reflection.text}，改{step[2]}"
                )
            elif kind == "confirm":
                reflection_confirm(character_id=character_id, reflection_id=key)
            elif kind == "deny":
                reflection_deny(character_id=character_id, reflection_id=key)
            elif kind == "archive":
                reflection_archive(character_id=character_id, reflection_id=key)
            elif kind == "restore":
                reflection_restore(character_id=character_id, reflection_id=key)
    sources.append(source)


@hypothesis_settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(STEP, min_size=1, max_size=12))
def test_as_of_t_is_the_state_observed_at_t_for_reflections_persona_and_corrections(steps):
    character = character_get_or_create(name=f"层{next(_names)}")
    for i in range(3):
        make_reflection(character=character, text=f"主人似乎喜欢第{i}种茶")
    history_baseline(character_id=character.pk)
    observed: list[tuple[datetime, dict[str, dict[str, dict[str, Any]]]]] = [(moment(), _state(character.pk))]
    sources: list[str] = []
    for step in steps:
        _apply(character.pk, step, sources, [at for at, _ in observed])
        observed.append((moment(), _state(character.pk)))
    for at, state in observed:
        assert _as_of(character.pk, at) == state
