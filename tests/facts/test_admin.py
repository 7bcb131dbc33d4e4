"""The admin writes facts through the services the REST API calls, and only those."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from facts.models import Fact
from facts.services.records import fact_hash
from nekomem.characters.models import Character
from tests.facts.factories import make_fact

pytestmark = pytest.mark.django_db


def memory_version(character_id: int) -> int:
    return Character.objects.values_list("memory_version", flat=True).get(pk=character_id)


def test_an_admin_edit_goes_through_the_service(admin_client: Client) -> None:
    fact = make_fact(text="主人养了一只橘猫", embedding="AAAA", embedding_model_id="m")
    before = memory_version(fact.character_id)
    url = reverse("admin:facts_fact_change", args=[fact.pk])
    answer = admin_client.post(
        url, {"text": "主人养了一只柴犬", "importance": 8, "entity": "master", "_save": "Save"}
    )
    assert answer.status_code == 302, answer.content.decode()[:2000]
    fact.refresh_from_db()
    assert (fact.text, fact.importance, fact.hash) == ("主人养了一只柴犬", 8, fact_hash("主人养了一只柴犬"))
    assert fact.embedding == "" and fact.embedding_model_id == ""  # re-embedded by the backfill
    assert fact.dedup_tokens  # re-indexed for near-duplicate checks
    assert memory_version(fact.character_id) == before + 1  # every process's recall cache is stale


def test_the_admin_edits_only_what_the_api_edits(admin_client: Client) -> None:
    fact = make_fact(text="主人周末喜欢去爬山", entity=Fact.Entity.MASTER)
    url = reverse("admin:facts_fact_change", args=[fact.pk])
    answer = admin_client.post(url, {"text": fact.text, "importance": 3, "entity": "neko", "archived": "on"})
    assert answer.status_code == 302
    fact.refresh_from_db()
    assert (fact.importance, fact.entity, fact.archived) == (3, Fact.Entity.NEKO, False)
    assert admin_client.get(reverse("admin:facts_fact_add")).status_code == 403


def test_an_admin_delete_goes_through_the_service(admin_client: Client) -> None:
    fact = make_fact(text="主人每天早上喝一杯冰美式")
    before = memory_version(fact.character_id)
    answer = admin_client.post(reverse("admin:facts_fact_delete", args=[fact.pk]), {"post": "yes"})
    assert answer.status_code == 302
    assert not Fact.objects.filter(pk=fact.pk).exists()
    assert memory_version(fact.character_id) == before + 1


def test_the_admins_bulk_delete_goes_through_the_service(admin_client: Client) -> None:
    first = make_fact(text="主人喜欢喝茶")
    second = make_fact(text="主人喜欢跑步", character=first.character)
    before = memory_version(first.character_id)
    answer = admin_client.post(
        reverse("admin:facts_fact_changelist"),
        {"action": "delete_selected", "_selected_action": [first.pk, second.pk], "post": "yes"},
    )
    assert answer.status_code == 302
    assert not Fact.objects.filter(pk__in=[first.pk, second.pk]).exists()
    assert memory_version(first.character_id) == before + 2  # one service call per fact


@pytest.mark.parametrize("model", ["factdeduppair", "extractioncursor"])
def test_rows_only_services_write_cannot_be_added_here(admin_client: Client, model: str) -> None:
    assert admin_client.get(reverse(f"admin:facts_{model}_add")).status_code == 403
