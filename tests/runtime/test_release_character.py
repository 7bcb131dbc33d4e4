"""POST /release_character/{name} (reference §1.5): cancel the character's derived work before a rename or
delete, answered as the original answers."""

from __future__ import annotations

import pytest

from nekomem.journal.jobs import job_create
from nekomem.journal.models import Job
from recent.jobs import COMPRESS_JOB, REVIEW_JOB
from tests.characters.factories import CharacterFactory

pytestmark = pytest.mark.django_db


def test_release_cancels_review_and_compress(client):
    character = CharacterFactory.create(name="小天")
    for kind in (REVIEW_JOB, COMPRESS_JOB):
        job_create(character_id=character.pk, kind=kind, enqueue=False)
    response = client.post("/release_character/小天", content_type="application/json")
    assert response.status_code == 200
    assert response.json() == {"status": "success", "character_name": "小天", "cancelled_derived_tasks": 2}
    assert set(Job.objects.values_list("status", "outcome")) == {("done", "cancelled")}
    again = client.post(
        "/release_character/小天?hold_derived_task_admission=true", content_type="application/json"
    )
    assert again.json()["cancelled_derived_tasks"] == 0


def test_release_of_an_unknown_character_has_nothing_to_cancel(client):
    response = client.post("/release_character/无名氏", content_type="application/json")
    assert response.status_code == 200 and response.json()["cancelled_derived_tasks"] == 0


def test_release_of_an_invalid_name_is_400(client):
    response = client.post("/release_character/a/b", content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "status": "error",
        "character_name": "a/b",
        "message": "character name contains a forbidden character '/'",
    }
