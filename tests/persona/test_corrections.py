from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.errors import Conflict
from nekomem.journal.models import Event
from persona.models import PersonaCorrection, PersonaEntry
from persona.services import persona_correction_resolve, persona_corrections_resolve, persona_ensure
from persona.services.entries import correction_enqueue
from tests.persona.factories import make_entry
from tests.support.llm_server import error, json_content

pytestmark = pytest.mark.django_db


def _queue(
    character: Character, old: str, new: str, *, entity: str = "master", scope: str | None = None
) -> None:
    with transaction.atomic():
        correction_enqueue(
            character_id=character.pk,
            old_text=old,
            new_text=new,
            entity=entity,
            now=timezone.now(),
            extra={"scope": scope} if scope else None,
        )


def test_all_four_resolutions_in_one_batch_zh(character, llm_server):
    merged = make_entry(character=character, text="主人喜欢喝冰美式", reinforcement=1.5)
    replaced = make_entry(character=character, text="主人住在上海")
    kept = make_entry(character=character, text="主人有一只猫")
    both = make_entry(character=character, text="主人会弹钢琴")
    _queue(character, merged.text, "主人冬天喝热美式")
    _queue(character, replaced.text, "主人搬到了杭州")
    _queue(character, kept.text, "主人有一只狗")
    _queue(character, both.text, "主人也会弹吉他")
    llm_server.script(
        json_content(
            [
                {"index": 0, "action": "merge", "text": "主人夏天喝冰美式，冬天喝热美式"},
                {"index": 1, "action": "keep_new", "text": "主人搬到了杭州"},
                {"index": 2, "action": "keep_old", "text": ""},
                {"index": 3, "action": "keep_both", "text": "主人也会弹吉他"},
            ]
        )
    )
    report = persona_corrections_resolve(character_id=character.pk)
    assert (report.resolved, report.failed) == (4, 0)
    merged.refresh_from_db()
    assert merged.text == "主人夏天喝冰美式，冬天喝热美式" and merged.reinforcement == 1.5
    assert merged.version_history[-1]["text"] == "主人喜欢喝冰美式"
    texts = set(PersonaEntry.objects.filter(character=character).values_list("text", flat=True))
    assert (
        "主人住在上海" not in texts
        and {"主人搬到了杭州", "主人有一只猫", "主人会弹钢琴", "主人也会弹吉他"} <= texts
    )
    assert "主人有一只狗" not in texts
    assert PersonaEntry.objects.get(text="主人搬到了杭州").entry_id.startswith("corr_")
    assert not PersonaCorrection.objects.exists()
    prompt = llm_server.requests[0].json["messages"][0]["content"]
    assert "[0] 已有(trust=user): 主人喜欢喝冰美式 | 新观察(trust=user): 主人冬天喝热美式" in prompt


def test_a_batch_holds_one_isolation_domain_en(character, llm_server):
    character.language = "en"
    character.save()
    _queue(character, "Master likes tea", "Master likes green tea")
    _queue(character, "Master is in a band", "Master left the band", scope="group:42")
    _queue(character, "Master runs daily", "Master runs weekly")
    llm_server.script(
        json_content(
            [{"index": 0, "action": "keep_old", "text": ""}, {"index": 1, "action": "keep_old", "text": ""}]
        )
    )
    report = persona_corrections_resolve(character_id=character.pk)
    assert report.resolved == 2
    prompt = llm_server.requests[0].json["messages"][0]["content"]
    assert "existing(trust=user): Master likes tea" in prompt and "band" not in prompt
    assert list(PersonaCorrection.objects.values_list("new_text", flat=True)) == ["Master left the band"]


def test_five_failed_attempts_drop_the_pair(character, llm_server):
    _queue(character, "主人喜欢下雨", "主人讨厌下雨")
    llm_server.script(
        error(500), json_content([{"index": 7, "action": "merge", "text": "x"}]), *[error(500)] * 3
    )
    now = timezone.now()
    first = persona_corrections_resolve(character_id=character.pk, now=now)
    assert first.reason == "llm failed"
    # The batch's job backs off: the next tick within the minute sends nothing.
    calls = len(llm_server.requests)
    assert persona_corrections_resolve(character_id=character.pk, now=now).reason == "waiting: backoff"
    assert len(llm_server.requests) == calls
    for _ in range(3):
        now += timedelta(minutes=20)
        persona_corrections_resolve(character_id=character.pk, now=now)
    assert PersonaCorrection.objects.get().resolve_attempts == 4
    report = persona_corrections_resolve(character_id=character.pk, now=now + timedelta(minutes=20))
    # Dropped from the queue, not lost: it stays, marked, for a person to resolve.
    dropped = PersonaCorrection.objects.get()
    assert report.dropped == 1 and dropped.resolve_attempts == 5 and dropped.dropped_at is not None
    calls = len(llm_server.requests)
    later = persona_corrections_resolve(character_id=character.pk, now=now + timedelta(hours=2))
    assert later.reason == "empty" and len(llm_server.requests) == calls


def test_a_pair_resolved_by_hand(character):
    entry = make_entry(character=character, text="主人喜欢夏天")
    _queue(character, entry.text, "主人更喜欢秋天")
    correction = PersonaCorrection.objects.get()
    persona_correction_resolve(character_id=character.pk, correction_pk=correction.pk, action="keep_new")
    assert list(PersonaEntry.objects.filter(character=character).values_list("text", flat=True)) == [
        "主人更喜欢秋天"
    ]


def test_by_hand_each_resolution_returns_the_entry_holding_its_text(character):
    merged = make_entry(character=character, text="主人喜欢喝绿茶")
    _queue(character, merged.text, "主人冬天喝红茶")
    _queue(character, "主人喜欢弹琴", "主人也喜欢唱歌")
    pks = list(PersonaCorrection.objects.order_by("pk").values_list("pk", flat=True))
    result = persona_correction_resolve(
        character_id=character.pk, correction_pk=pks[0], action="merge", text="主人夏天喝绿茶，冬天喝红茶"
    )
    assert result is not None and result.entry_id == merged.entry_id
    assert result.text == "主人夏天喝绿茶，冬天喝红茶"
    added = persona_correction_resolve(character_id=character.pk, correction_pk=pks[1], action="keep_both")
    assert added is not None and added.text == "主人也喜欢唱歌" and added.entry_id.startswith("corr_")


def test_by_hand_a_card_entry_is_neither_merged_into_nor_replaced(character):
    persona_ensure(character_id=character.pk)
    card = PersonaEntry.objects.get(character=character, protected=True, text="昵称: 阿凛")
    _queue(character, card.text, "昵称: 凛凛")
    correction = PersonaCorrection.objects.get()
    events = Event.objects.count()
    for action in ("merge", "keep_new"):
        with pytest.raises(Conflict, match="character-card"):
            persona_correction_resolve(character_id=character.pk, correction_pk=correction.pk, action=action)
    card.refresh_from_db()
    assert card.text == "昵称: 阿凛" and PersonaCorrection.objects.filter(pk=correction.pk).exists()
    assert Event.objects.count() == events
    assert (
        persona_correction_resolve(character_id=character.pk, correction_pk=correction.pk, action="keep_old")
        is None
    )
    card.refresh_from_db()
    assert card.text == "昵称: 阿凛" and not PersonaCorrection.objects.exists()


def test_by_hand_a_pair_no_longer_queued_is_refused(character):
    with pytest.raises(Conflict, match="no longer queued"):
        persona_correction_resolve(character_id=character.pk, correction_pk=987654, action="keep_old")
