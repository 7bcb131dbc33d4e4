from __future__ import annotations

from datetime import timedelta

import pytest

from facts.models import Fact
from nekomem.characters.models import Character
from tests.facts.conftest import T0
from tests.facts.factories import FactFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/characters/小天/facts/"


@pytest.fixture
def facts(character):
    return {
        "cat": FactFactory.create(character=character, text="阿凛喜欢猫", importance=8, created_at=T0),
        "low": FactFactory.create(character=character, text="阿凛路过便利店", importance=3, created_at=T0),
        "neko": FactFactory.create(
            character=character, text="小天怕打雷", entity="neko", absorbed=True, created_at=T0
        ),
        "old": FactFactory.create(
            character=character,
            text="阿凛去年去了京都",
            archived=True,
            absorbed=True,
            created_at=T0,
            event_start_at=T0 - timedelta(days=365),
        ),
        "other": FactFactory.create(text="别的角色的事实"),
    }


def ids(response) -> set[str]:
    return {f["id"] for f in response.json()["results"]}


def test_list_is_scoped_to_the_character_and_filters(client, facts):
    assert ids(client.get(URL)) == {facts[k].fact_id for k in ("cat", "low", "neko", "old")}
    assert ids(client.get(URL, {"entity": "neko"})) == {facts["neko"].fact_id}
    assert ids(client.get(URL, {"importance": 5})) == {facts[k].fact_id for k in ("cat", "neko", "old")}
    assert ids(client.get(URL, {"absorbed": "false"})) == {facts["cat"].fact_id, facts["low"].fact_id}
    assert ids(client.get(URL, {"archived": "true"})) == {facts["old"].fact_id}
    window = {"start": (T0 - timedelta(days=400)).isoformat(), "end": (T0 - timedelta(days=1)).isoformat()}
    assert ids(client.get(URL, window)) == {facts["old"].fact_id}
    assert client.get(URL, {"importance": 11}).status_code == 400
    assert client.get("/api/v1/characters/nobody/facts/").status_code == 404


def test_retrieve_edit_and_delete(client, facts, character):
    cat = facts["cat"]
    Fact.objects.filter(pk=cat.pk).update(embedding="AAAA", embedding_text_sha256="x", embedding_model_id="m")
    url = f"{URL}{cat.fact_id}/"
    assert client.get(url).json()["text"] == "阿凛喜欢猫"
    version = Character.objects.get(pk=character.pk).memory_version

    response = client.patch(url, {"text": "阿凛很喜欢猫", "importance": 9}, content_type="application/json")

    assert response.status_code == 200 and response.json()["importance"] == 9
    cat.refresh_from_db()
    assert cat.text == "阿凛很喜欢猫" and cat.embedding == "" and cat.embedding_model_id == ""
    assert Character.objects.get(pk=character.pk).memory_version == version + 1
    assert client.patch(url, {"importance": 0}, content_type="application/json").status_code == 400
    assert client.get(f"{URL}{facts['other'].fact_id}/").status_code == 404  # another character's fact
    deleted = client.delete(url)
    assert deleted.status_code == 200 and deleted.json()["removed"]["facts"] == 1
    assert client.delete(url).status_code == 404


def test_the_entity_is_edited_to_one_of_the_three_kinds(client, facts):
    url = f"{URL}{facts['cat'].fact_id}/"
    response = client.patch(url, {"entity": "relationship"}, content_type="application/json")
    assert response.status_code == 200 and response.json()["entity"] == "relationship"
    assert client.patch(url, {"entity": "dog"}, content_type="application/json").status_code == 400
    assert Fact.objects.get(pk=facts["cat"].pk).entity == Fact.Entity.RELATIONSHIP


def test_openapi_schema_describes_the_facts_routes(client):
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json").content.decode()
    assert "/api/v1/characters/{name}/facts/" in schema and "importance" in schema


MEMBER = "group_participant:qq:7788:1001"
GROUP = "group_chat:qq:7788"


@pytest.fixture
def subject_facts(character):
    return {
        "master": FactFactory.create(character=character, text="阿凛喜欢猫", created_at=T0),
        "member": FactFactory.create(
            character=character, text="群友1001喜欢钓鱼", subject_key=MEMBER, created_at=T0
        ),
        "group": FactFactory.create(
            character=character, text="这个群每周五打游戏", subject_key=GROUP, created_at=T0
        ),
    }


def test_the_list_takes_the_browsers_subject_filter(client, subject_facts):
    master, member, group = (subject_facts[k].fact_id for k in ("master", "member", "group"))
    assert ids(client.get(URL)) == ids(client.get(URL, {"subject": ""})) == {master}
    assert (
        ids(client.get(URL, {"subject": "all"}))
        == ids(client.get(URL, {"subject": "*"}))
        == {
            master,
            member,
            group,
        }
    )
    listed = client.get(URL, {"subject": MEMBER}).json()["results"]
    assert [(f["id"], f["subject_key"]) for f in listed] == [(member, MEMBER)]
    assert ids(client.get(URL, {"subject": GROUP})) == {group}
    assert ids(client.get(URL, {"subject": "participant:qq:404"})) == set()
    # Filters combine with the subject.
    assert ids(client.get(URL, {"subject": "all", "archived": "true"})) == set()


@pytest.mark.parametrize(
    "bad", ["master", "everyone", ":qq:1", "group_chat:", "group_chat:" + "9" * 600, "a:\x01"]
)
def test_a_subject_that_cannot_be_a_key_is_a_400_with_a_json_body(client, subject_facts, bad):
    response = client.get(URL, {"subject": bad})
    assert response.status_code == 400
    body = response.json()
    assert body["status"] == "error" and "subject" in body["errors"]


def test_a_subjects_fact_is_retrieved_edited_and_deleted_by_its_id(client, subject_facts):
    member = subject_facts["member"]
    url = f"{URL}{member.fact_id}/"
    retrieved = client.get(url)
    assert retrieved.status_code == 200
    assert (retrieved.json()["text"], retrieved.json()["subject_key"]) == ("群友1001喜欢钓鱼", MEMBER)

    edited = client.patch(url, {"text": "群友1001喜欢海钓", "importance": 9}, content_type="application/json")
    assert edited.status_code == 200 and edited.json()["text"] == "群友1001喜欢海钓"
    row = Fact.with_subjects.get(pk=member.pk)
    assert (row.text, row.importance, row.subject_key) == ("群友1001喜欢海钓", 9, MEMBER)

    deleted = client.delete(url)
    assert deleted.status_code == 200
    assert not Fact.with_subjects.filter(pk=member.pk).exists()
    assert client.get(url).status_code == 404
    assert client.delete(url).status_code == 404
    # The master's fact and the other subject's are untouched.
    assert Fact.with_subjects.filter(character=member.character).count() == 2


def test_the_schema_documents_the_subject_parameter_of_the_three_list_routes(client):
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    for path in ("facts/", "reflections/", "persona/entries/"):
        parameters = schema["paths"][f"/api/v1/characters/{{name}}/{path}"]["get"]["parameters"]
        (subject,) = [p for p in parameters if p["name"] == "subject"]
        assert subject["in"] == "query" and "`all`" in subject["description"], path
