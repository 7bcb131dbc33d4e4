from __future__ import annotations

import factory
from django.utils import timezone

from groupchat.identity.models import Account, ActivityEvent, Entity, TrustBarrier


class EntityFactory(factory.django.DjangoModelFactory[Entity]):
    class Meta:
        model = Entity

    entity_id = factory.Sequence(lambda n: f"entity-{n:08x}")
    created_at = factory.LazyFunction(timezone.now)


class AccountFactory(factory.django.DjangoModelFactory[Account]):
    """A QQ account folded into its own entity, as ``accounts/ensure`` leaves it."""

    class Meta:
        model = Account

    account_id = factory.Sequence(lambda n: f"qq:{1000 + n}")
    platform = "qq"
    entity = factory.SubFactory(EntityFactory)
    bound_at = factory.LazyFunction(timezone.now)
    tier = Account.Tier.NORMAL
    updated_at = factory.LazyFunction(timezone.now)


class ActivityEventFactory(factory.django.DjangoModelFactory[ActivityEvent]):
    class Meta:
        model = ActivityEvent

    account = factory.SubFactory(AccountFactory)
    event_id = factory.Sequence(lambda n: f"qq:msg:{n:08d}")
    count = 1
    recorded_at = factory.LazyFunction(timezone.now)


class TrustBarrierFactory(factory.django.DjangoModelFactory[TrustBarrier]):
    class Meta:
        model = TrustBarrier

    platform = factory.Sequence(lambda n: f"platform{n}")
    status = TrustBarrier.Status.CLEARED
    source = "legacy_profiles.json"
    changed_at = factory.LazyFunction(timezone.now)
