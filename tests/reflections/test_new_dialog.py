"""/new_dialog renders the pending, active confirmed and past reflection sections (§5.1), zh and en."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from reflections.models import Reflection
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db


def render(client, name: str, language: str) -> str:
    return client.get(f"/new_dialog/{name}", {"language": language}).content.decode()


def seed(character):
    now = timezone.now()
    strong = {"reinforcement": 1.2, "rein_last_signal_at": now}
    make_reflection(character=character, text="主人最近似乎在准备考试")
    make_reflection(
        character=character,
        text="主人晚上经常熬夜",
        status=Reflection.Status.CONFIRMED,
        temporal_scope="pattern",
        **strong,
    )
    make_reflection(
        character=character,
        text="主人那阵子在搬家",
        status=Reflection.Status.CONFIRMED,
        temporal_scope="state",
        created_at=now - timedelta(days=15),
        **strong,
    )
    make_reflection(
        character=character,
        text="主人昨天去了海边",
        status=Reflection.Status.CONFIRMED,
        temporal_scope="episode",
        created_at=now - timedelta(days=1),
        **strong,
    )
    make_reflection(
        character=character, text="主人讨厌香菜", status=Reflection.Status.CONFIRMED, temporal_scope="pattern"
    )  # score 0: not active
    make_reflection(character=character, text="主人养了一只猫", status=Reflection.Status.DENIED)
    make_reflection(
        character=character,
        text="主人喜欢周杰伦",
        status=Reflection.Status.CONFIRMED,
        suppress=True,
        **strong,
    )


def test_one_2000_token_pool_drops_from_the_lowest_score(client, character):
    now = timezone.now()
    long_text = "主人" + "非常" * 700 + "喜欢安静"  # about 1000 tokens each
    for i, r in enumerate((0.1, 0.9, 0.5)):
        make_reflection(character=character, text=f"{i}{long_text}", reinforcement=r, rein_last_signal_at=now)
    text = render(client, "小天", "zh")
    assert f"1{long_text}" in text and f"2{long_text}" in text and f"0{long_text}" not in text
