from __future__ import annotations

import json

import factory
from django.utils import timezone

from recent.models import (
    RawMessage,
    RecentMessage,
    RecentMeta,
    RecentReviewState,
    TheaterCapsule,
    TheaterTombstone,
)
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


class TheaterCapsuleFactory(factory.django.DjangoModelFactory[TheaterCapsule]):
    """An archived theater episode, its message as the main server posts it to ``/cache``."""

    class Meta:
        model = TheaterCapsule

    character = factory.SubFactory(CharacterFactory)
    story_id = factory.Sequence(lambda n: f"story-{n}")
    session_id = "s1"
    title = "The Lighthouse"
    archive_through_revision = 3
    summary = "Mel found the keeper's lost logbook."
    message = factory.LazyAttribute(
        lambda o: {
            "type": "system",
            "data": {
                "content": o.summary,
                "metadata": {
                    "source": "theater_numeric_v2",
                    "memory_tier": "episode_summary",
                    "story_id": o.story_id,
                    "session_id": o.session_id,
                    "archive_through_revision": o.archive_through_revision,
                },
            },
        }
    )


class TheaterTombstoneFactory(factory.django.DjangoModelFactory[TheaterTombstone]):
    class Meta:
        model = TheaterTombstone

    character = factory.SubFactory(CharacterFactory)
    kind = TheaterTombstone.Kind.RETRACT
    story_id = factory.Sequence(lambda n: f"story-{n}")
    session_id = "s1"
    archive_through_revision = 3
    archive_request_id = factory.Sequence(lambda n: f"archive-{n}")
    archive_attempt = 1
