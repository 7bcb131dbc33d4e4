"""Events written by the persona services rebuild the view after a crash or a restore."""

from __future__ import annotations

import pytest

from nekomem.journal.models import AppliedSentinel, Event
from nekomem.journal.services import events_reconcile
from persona.models import PersonaCorrection, PersonaEntry
from persona.services import persona_entry_create, persona_entry_edit

pytestmark = pytest.mark.django_db


def test_a_lost_add_edit_and_queued_correction_are_replayed(character):
    first = Event.objects.order_by("-seq").values_list("seq", flat=True).first() or 0
    added = persona_entry_create(character_id=character.pk, entity="master", text="主人每天早上喝冰美式咖啡")
    assert added.entry is not None
    persona_entry_edit(character_id=character.pk, entry_id=added.entry.entry_id, text="主人每天早上喝冰美式")
    persona_entry_create(character_id=character.pk, entity="master", text="主人每天早上改喝热美式")
    expected = PersonaEntry.objects.get(entry_id=added.entry.entry_id)
    # The views lose everything after the card mirror: the events must bring it back.
    PersonaEntry.objects.filter(protected=False).delete()
    PersonaCorrection.objects.all().delete()
    AppliedSentinel.objects.filter(character=character).update(last_applied_seq=first)
    report = events_reconcile(character_id=character.pk)
    assert report.applied >= 3 and not report.paused
    replayed = PersonaEntry.objects.get(entry_id=added.entry.entry_id)
    assert (replayed.text, replayed.version_history) == (expected.text, expected.version_history)
    assert list(PersonaCorrection.objects.values_list("new_text", flat=True)) == ["主人每天早上改喝热美式"]
