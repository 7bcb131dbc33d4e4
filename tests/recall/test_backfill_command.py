"""``manage.py backfill``: every missing vector embedded now, a round at a time, for one or all."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from facts.models import Fact
from nekomem.characters.models import Character
from nekomem.embeddings import get_embedder
from recall.backfill import embedding_backfill_run
from tests.recall.support import fact_entry, import_facts, require_muse

pytestmark = pytest.mark.django_db


@pytest.fixture
def characters(tmp_path: Path) -> tuple[Character, Character]:
    require_muse()
    now = timezone.now()
    for name, texts in (
        (
            "小满",
            [
                "主人喜欢喝绿茶",
                "主人在学钢琴",
                "Master adopted a cat named Mochi",
                "主人周末去爬山",
                "主人怕冷",
            ],
        ),
        ("小雪", ["主人养了一只狗", "主人喜欢下雨天"]),
    ):
        import_facts(tmp_path, name, [fact_entry(t, now - timedelta(days=i)) for i, t in enumerate(texts)])
    return Character.objects.get(name="小满"), Character.objects.get(name="小雪")


def without_vectors(character: Character) -> int:
    return Fact.objects.filter(character=character, embedding="").count()


def test_backfill_one_character_embeds_all_of_its_facts_and_no_others(characters):
    first, second = characters
    out = StringIO()
    call_command("backfill", "--character", "小满", stdout=out)
    assert without_vectors(first) == 0 and without_vectors(second) == 2
    assert "1 characters: 5 vectors written (5 facts, 0 raw turns)" in out.getvalue()
    embedder = get_embedder()
    assert embedder is not None
    assert set(Fact.objects.filter(character=first).values_list("embedding_model_id", flat=True)) == {
        embedder.model_id
    }


def test_backfill_of_everyone_then_again_writes_nothing(characters):
    call_command("backfill", stdout=StringIO())
    assert [without_vectors(c) for c in characters] == [0, 0]
    out = StringIO()
    call_command("backfill", stdout=out)
    assert "2 characters: 0 vectors written" in out.getvalue()


def test_a_run_reports_each_round_to_its_progress(characters):
    first, _ = characters
    rounds: list[int] = []
    report = embedding_backfill_run(character_id=first.pk, on_progress=rounds.append, round_limit=2)
    assert rounds == [2, 2, 1] and report.embedded == 5
    assert without_vectors(first) == 0


def test_an_unknown_character_is_an_error_with_a_non_zero_exit():
    with pytest.raises(CommandError, match="no character named 'nobody'") as excinfo:
        call_command("backfill", "--character", "nobody")
    assert excinfo.value.returncode == 1


def test_with_vectors_disabled_the_command_says_so(characters, settings):
    settings.EMBEDDINGS_ENABLED = False
    with pytest.raises(CommandError, match="vectors are disabled"):
        call_command("backfill", stdout=StringIO())
    assert without_vectors(characters[0]) == 5
