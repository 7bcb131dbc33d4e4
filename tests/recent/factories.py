from __future__ import annotations

import factory

from recent.models import RecentMessage, RecentMeta, RecentReviewState
from tests.characters.factories import CharacterFactory


class RecentMessageFactory(factory.django.DjangoModelFactory[RecentMessage]):
    class Meta:
        model = RecentMessage

    character = factory.SubFactory(CharacterFactory)
    position = factory.Sequence(lambda n: n)
    type = RecentMessage.Kind.HUMAN
    data = factory.Sequence(lambda n: {"content": f"第{n}句话"})


class RecentMetaFactory(factory.django.DjangoModelFactory[RecentMeta]):
    class Meta:
        model = RecentMeta

    character = factory.SubFactory(CharacterFactory)
    last_past_block_update_at = None


class RecentReviewStateFactory(factory.django.DjangoModelFactory[RecentReviewState]):
    class Meta:
        model = RecentReviewState

    character = factory.SubFactory(CharacterFactory)
