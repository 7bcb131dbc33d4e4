from __future__ import annotations

import factory
from django.utils import timezone

from groupchat.models import ScopedWriteKey, SubjectForgetEpoch, SubjectRecord
from tests.characters.factories import CharacterFactory

MEMBER_KEY = "group_participant:qq:7788:1001"


class SubjectRecordFactory(factory.django.DjangoModelFactory[SubjectRecord]):
    class Meta:
        model = SubjectRecord

    character = factory.SubFactory(CharacterFactory)
    subject_key = factory.Sequence(lambda n: f"group_participant:qq:7788:{1000 + n}")
    subject_kind = "group_participant"
    subject_id = factory.LazyAttribute(lambda o: o.subject_key.partition(":")[2])
    scope = factory.SelfAttribute("subject_key")
    display_name = "小明"
    last_write_at = factory.LazyFunction(timezone.now)


class SubjectForgetEpochFactory(factory.django.DjangoModelFactory[SubjectForgetEpoch]):
    class Meta:
        model = SubjectForgetEpoch

    character = factory.SubFactory(CharacterFactory)
    subject_key = factory.Sequence(lambda n: f"participant:qq:{1000 + n}")
    epoch = 3
    generation = 1
    forgotten_at = factory.LazyFunction(timezone.now)


class ScopedWriteKeyFactory(factory.django.DjangoModelFactory[ScopedWriteKey]):
    """A keyed ``scoped_history`` write that was applied."""

    class Meta:
        model = ScopedWriteKey

    character = factory.SubFactory(CharacterFactory)
    key = factory.Sequence(lambda n: f"group-digest-{n}")
    fingerprint = factory.Sequence(lambda n: f"{n:064x}")
    subject_keys = f"\n{MEMBER_KEY}\n"
    status = ScopedWriteKey.Status.DONE
    answer = factory.Dict({"status": "processed"})
    created_at = factory.LazyFunction(timezone.now)
