from __future__ import annotations

import base64
import struct

import factory

from recall.models import RawTurnVector
from tests.recent.factories import RawMessageFactory


class RawTurnVectorFactory(factory.django.DjangoModelFactory[RawTurnVector]):
    """The cached vector of one raw turn (the fields as stored; a four-dimensional vector)."""

    class Meta:
        model = RawTurnVector

    raw = factory.SubFactory(RawMessageFactory)
    character = factory.SelfAttribute("raw.character")
    # base64 of float16 values, as the backfill stores it (the admin shows its dimensions)
    embedding = factory.Sequence(lambda n: base64.b64encode(struct.pack("<4e", n % 7, 1, 0, -1)).decode())
    embedding_text_sha256 = factory.Sequence(lambda n: f"{n:064x}")
    embedding_model_id = "model-a"
