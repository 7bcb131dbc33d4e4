"""``fact_update``: what the API, the admin and the memory browser change, and what it refuses."""

from __future__ import annotations

import pytest

from facts.models import Fact
from facts.services import fact_update
from tests.facts.factories import FactFactory

pytestmark = pytest.mark.django_db


def test_the_entity_changes_alone(character):
    fact = FactFactory.create(character=character, text="主人和小天一起看了烟花", importance=6)
    fact_update(character_id=character.pk, fact_id=fact.fact_id, entity=Fact.Entity.RELATIONSHIP)
    fact.refresh_from_db()
    assert (fact.entity, fact.text, fact.importance) == (
        Fact.Entity.RELATIONSHIP,
        "主人和小天一起看了烟花",
        6,
    )


@pytest.mark.parametrize(
    "change",
    [
        {"importance": 0},
        {"importance": 11},
        {"entity": "dog"},
        {"text": "   "},
        {"text": "", "importance": 3},
    ],
)
def test_a_value_out_of_range_is_refused_and_changes_nothing(character, change):
    fact = FactFactory.create(character=character, text="主人喜欢下雨天", importance=6)
    with pytest.raises(ValueError):
        fact_update(character_id=character.pk, fact_id=fact.fact_id, **change)
    fact.refresh_from_db()
    assert (fact.text, fact.importance, fact.entity) == ("主人喜欢下雨天", 6, Fact.Entity.MASTER)
