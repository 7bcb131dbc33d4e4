"""The long-term-memory block's per-process cache: which memory-version bumps re-render it."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from facts.services import FactDraft, facts_persist
from nekomem.characters.models import Character, MemoryChange
from nekomem.characters.selectors import character_memory_touched
from nekomem.characters.services import character_memory_changed
from persona.selectors import long_term_memory_markdown
from persona.services import persona_entry_create
from reflections.evidence import Signal
from reflections.models import Reflection
from reflections.services.lifecycle import reflection_signal_apply
from tests.persona.factories import make_entry
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db


def version_of(character: Character) -> int:
    character.refresh_from_db(fields=["memory_version"])
    return character.memory_version


def render(character: Character, now: datetime) -> str:
    return long_term_memory_markdown(
        character=character, language="zh", now=now, version=version_of(character)
    )


@pytest.fixture
def now() -> datetime:
    # The middle of a minute: the cache also lapses at every minute's turn.
    return timezone.now().replace(second=30, microsecond=0)


def test_a_new_fact_keeps_the_block_and_costs_one_read(character, now, django_assert_num_queries):
    make_entry(character=character, section="master", text="阿凛喜欢抹茶", protected=True)
    first = render(character, now)
    assert "阿凛喜欢抹茶" in first
    report = facts_persist(
        character_id=character.pk, drafts=[FactDraft(text="阿凛周末去爬山了", importance=6, entity="master")]
    )
    assert report.created, "the fact was stored (and bumped the memory version)"
    version = version_of(character)
    # One aggregate read of the change log, no render.
    with django_assert_num_queries(1):
        again = long_term_memory_markdown(character=character, language="zh", now=now, version=version)
    assert again == first


def test_a_vector_only_change_keeps_the_block(character, now, django_assert_num_queries):
    reflection = make_reflection(
        character=character, text="阿凛最近在准备考试", status=Reflection.Status.CONFIRMED, reinforcement=1.0
    )
    first = render(character, now)
    assert "阿凛最近在准备考试" in first
    with transaction.atomic():
        character_memory_changed(
            character_id=character.pk, pool="reflection", rows=[reflection.pk], vector_only=True
        )
    version = version_of(character)
    with django_assert_num_queries(1):
        again = long_term_memory_markdown(character=character, language="zh", now=now, version=version)
    assert again == first


def test_a_reflection_signal_re_renders_the_block(character, now):
    reflection = make_reflection(
        character=character,
        text="阿凛似乎不太喜欢早起",
        status=Reflection.Status.CONFIRMED,
        reinforcement=0.5,
        rein_last_signal_at=now,
    )
    assert "阿凛似乎不太喜欢早起" in render(character, now)
    before = version_of(character)
    with transaction.atomic():
        reflection_signal_apply(reflection=reflection, signal=Signal.REBUTTAL, source="test", now=now)
    assert version_of(character) == before + 1, "an evidence change bumps the memory version"
    assert MemoryChange.objects.filter(
        character=character, version=before + 1, pool="reflection", row=reflection.pk
    ).exists()
    # Disputed below zero, the confirmed reflection leaves the block at once (not at the minute's turn).
    assert "阿凛似乎不太喜欢早起" not in render(character, now)


def test_a_persona_write_re_renders_the_block(character, now):
    assert "阿凛养了一只猫" not in render(character, now)
    before = version_of(character)
    persona_entry_create(character_id=character.pk, entity="master", text="阿凛养了一只猫", now=now)
    # Logged in the persona pool (a recall index, which holds no persona entry, keeps serving).
    assert MemoryChange.objects.filter(character=character, version__gt=before, pool="persona").exists()
    assert not MemoryChange.objects.filter(character=character, version__gt=before, pool="").exists()
    assert "阿凛养了一只猫" in render(character, now)


def test_a_write_without_a_pool_re_renders_the_block(character, now):
    assert "阿凛养了一只猫" not in render(character, now)
    entry = make_entry(character=character, section="master", text="阿凛养了一只猫", protected=True)
    with transaction.atomic():
        character_memory_changed(character_id=entry.character_id)  # an import: anything may have changed
    assert "阿凛养了一只猫" in render(character, now)


def test_a_rename_of_the_master_re_renders_the_headers(character, now):
    make_entry(character=character, section="master", text="喜欢抹茶", protected=True)
    assert "### 关于阿凛" in render(character, now)
    Character.objects.filter(pk=character.pk).update(master_name="小凛")
    character.refresh_from_db()
    assert "### 关于小凛" in render(character, now)


class TestChangeLogReads:
    def test_only_the_pools_asked_for_count(self, character):
        with transaction.atomic():
            character_memory_changed(character_id=character.pk, pool="fact", rows=[1, 2])
            character_memory_changed(character_id=character.pk, pool="reflection", rows=[7], vector_only=True)
        top = version_of(character)
        assert not character_memory_touched(
            character_id=character.pk, after=top - 2, through=top, pools=["reflection"]
        )
        assert character_memory_touched(character_id=character.pk, after=top - 2, through=top, pools=["fact"])

    def test_a_bump_without_a_pool_touches_every_pool(self, character):
        with transaction.atomic():
            character_memory_changed(character_id=character.pk)
        top = version_of(character)
        assert character_memory_touched(character_id=character.pk, after=top - 1, through=top, pools=["x"])

    def test_a_pruned_stretch_counts_as_touched(self, character):
        with transaction.atomic():
            for _ in range(3):
                character_memory_changed(character_id=character.pk, pool="fact", rows=[1])
        top = version_of(character)
        MemoryChange.objects.filter(character=character, version=top - 1).delete()
        assert character_memory_touched(character_id=character.pk, after=top - 3, through=top, pools=["y"])
        # The newest version missing (a bump not yet visible) counts as unknown as well.
        MemoryChange.objects.filter(character=character, version=top).delete()
        assert character_memory_touched(character_id=character.pk, after=top - 2, through=top, pools=["y"])

    def test_no_newer_version_touches_nothing(self, character, django_assert_num_queries):
        with django_assert_num_queries(0):
            assert not character_memory_touched(character_id=character.pk, after=5, through=5, pools=["fact"])


def test_the_cache_lapses_at_the_minute(character, now):
    make_entry(character=character, section="master", text="喜欢抹茶", protected=True)
    render(character, now)
    make_entry(character=character, section="master", text="讨厌香菜", protected=True)  # no bump
    assert "讨厌香菜" not in render(character, now)
    assert "讨厌香菜" in render(character, now + timedelta(minutes=1))
