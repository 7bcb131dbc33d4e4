from __future__ import annotations

import pytest
from django.utils import timezone

from reflections.models import Reflection
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db

BASE = "/api/v1/characters/小天/reflections/"


def test_list_filters_by_status_and_shows_evidence(client, character):
    now = timezone.now()
    pending = make_reflection(character=character, reinforcement=0.4, rein_last_signal_at=now)
    make_reflection(character=character, status=Reflection.Status.CONFIRMED)
    rows = client.get(BASE, {"status": "pending"}).json()
    rows = rows["results"] if isinstance(rows, dict) else rows
    assert [r["id"] for r in rows] == [pending.reflection_id]
    assert rows[0]["evidence_score"] == pytest.approx(0.4, abs=1e-4)
    assert rows[0]["reinforcement"] == 0.4 and rows[0]["rein_last_signal_at"] is not None


def test_confirm_deny_archive_restore(client, character):
    reflection = make_reflection(character=character)

    def post(path: str):
        return client.post(path, data="{}", content_type="application/json")

    url = f"{BASE}{reflection.reflection_id}/"
    assert post(url + "confirm/").json()["status"] == "confirmed"
    assert post(url + "confirm/").status_code == 409
    assert post(url + "deny/").json()["status"] == "denied"
    archived = post(url + "archive/").json()
    assert archived["archive_shard_path"] and archived["status"] == "denied"
    restored = post(url + "restore/").json()
    assert restored["status"] == "pending" and restored["archive_shard_path"] is None
    assert post(f"{BASE}ref_missing/confirm/").status_code == 404


def test_funnel_rejects_bad_input(client, character):
    assert client.get("/api/memory/funnel/小天", {"since": "yesterday"}).status_code == 400
    response = client.get(
        "/api/memory/funnel/小天", {"since": "2024-05-02T00:00:00", "until": "2024-05-01T00:00:00"}
    )
    assert response.status_code == 400
    body = client.get("/api/memory/funnel/小天").json()
    assert body["lanlan_name"] == "小天" and len(body["counts"]) == 10


MEMBER = "group_participant:qq:7788:1001"


def _ids(response) -> list[str]:
    rows = response.json()
    rows = rows["results"] if isinstance(rows, dict) else rows
    return sorted(r["id"] for r in rows)


def test_the_list_takes_the_subject_filter_and_a_subjects_reflection_is_reached_by_id(client, character):
    master = make_reflection(character=character)
    member = make_reflection(character=character, subject_key=MEMBER, text="群友1001似乎很爱钓鱼")
    assert _ids(client.get(BASE)) == [master.reflection_id]
    assert _ids(client.get(BASE, {"subject": "all"})) == sorted([master.reflection_id, member.reflection_id])
    assert _ids(client.get(BASE, {"subject": MEMBER})) == [member.reflection_id]
    assert _ids(client.get(BASE, {"subject": MEMBER, "status": "confirmed"})) == []
    refused = client.get(BASE, {"subject": "nobody"})
    assert refused.status_code == 400 and "subject" in refused.json()["errors"]

    url = f"{BASE}{member.reflection_id}/"
    retrieved = client.get(url).json()
    assert (retrieved["text"], retrieved["subject_key"]) == ("群友1001似乎很爱钓鱼", MEMBER)
    edited = client.patch(url, {"text": "群友1001似乎很爱海钓"}, content_type="application/json")
    assert edited.status_code == 200
    assert Reflection.with_subjects.get(pk=member.pk).text == "群友1001似乎很爱海钓"
    assert client.delete(url).status_code == 200
    assert not Reflection.with_subjects.filter(pk=member.pk).exists()
    assert client.get(url).status_code == 404
    assert Reflection.objects.filter(pk=master.pk).exists()
