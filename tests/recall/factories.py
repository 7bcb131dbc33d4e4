from __future__ import annotations

import factory

from recall.models import RawTurnVector
from tests.recent.factories import RawMessageFactory


class RawTurnVectorFactory(factory.django.DjangoModelFactory[RawTurnVector]):
    """The cached vector of one raw turn (the fields as stored; no real embedding)."""

    class Meta:
        model = RawTurnVector

    raw = factory.SubFactory(RawMessageFactory)
    character = factory.SelfAttribute("raw.character")
    embedding = factory.Sequence(lambda n: f"vector-{n}")
    embedding_text_sha256 = factory.Sequence(lambda n: f"{n:064x}")
    embedding_model_id = "model-a"
