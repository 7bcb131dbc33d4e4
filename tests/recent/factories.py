from __future__ import annotations

import json

import factory
from django.utils import timezone

from recent.models import RawMessage, RecentMessage, RecentMeta, RecentReviewState
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


class RawMessageFactory(factory.django.DjangoModelFactory[RawMessage]):
    """One message of the raw log, in the {type, data} shape the write path stores."""

    class Meta:
        model = RawMessage

    character = factory.SubFactory(CharacterFactory)
    session_id = factory.Sequence(lambda n: f"session-{n}")
    message = factory.Sequence(lambda n: json.dumps({"type": "human", "data": {"content": f"第{n}句话"}}))
    timestamp = factory.LazyFunction(timezone.now)
