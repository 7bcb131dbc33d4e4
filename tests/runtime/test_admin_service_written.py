"""The service-written foundation rows have admin pages: each list and each row opens for a superuser,
and none can be added, changed or deleted there (their services keep the caches in step)."""

from __future__ import annotations

import pytest
from django.db.models import Model
from django.urls import reverse

from facts.models import FactToken
from nekomem.characters.models import MemoryChange
from nekomem.embeddings.vectors import encode_vector
from nekomem.runtime.models import FeatureSwitch, StorageState
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_set
from recall.models import PairsCursor, RawTurnVector
from tests.characters.factories import CharacterFactory
from tests.facts.factories import make_fact
from tests.recent.factories import RawMessageFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def rows() -> dict[type[Model], Model]:
    character = CharacterFactory.create(name="小天")
    fact = make_fact(character=character, text="主人喜欢画水彩画")
    raw = RawMessageFactory.create(character=character)
    switch_set(name=POWERFUL_MEMORY, enabled=False)
    return {
        MemoryChange: MemoryChange.objects.create(character=character, version=3, pool="facts", row=fact.pk),
        StorageState: StorageState.objects.update_or_create(pk=1, defaults={"reason": "backup"})[0],
        FeatureSwitch: FeatureSwitch.objects.get(name=POWERFUL_MEMORY),
        FactToken: FactToken.objects.create(character=character, fact=fact, token="水彩", size=4),
        RawTurnVector: RawTurnVector.objects.create(
            raw=raw, character=character, embedding=encode_vector([0.5] * 8), embedding_model_id="test-model"
        ),
        PairsCursor: PairsCursor.objects.create(character=character, through_version=3),
    }


@pytest.mark.parametrize(
    "model", [MemoryChange, StorageState, FeatureSwitch, FactToken, RawTurnVector, PairsCursor]
)
def test_changelist_and_row_open_read_only(admin_client, rows, model):
    row = rows[model]
    prefix = f"admin:{model._meta.app_label}_{model._meta.model_name}"
    listing = admin_client.get(reverse(f"{prefix}_changelist"))
    assert listing.status_code == 200
    assert listing.context["cl"].result_count >= 1
    page = admin_client.get(reverse(f"{prefix}_change", args=[row.pk]))
    assert page.status_code == 200
    # Read-only: the page is a view, with no save button, and adding or deleting is refused.
    assert page.context["has_change_permission"] is False
    assert admin_client.get(reverse(f"{prefix}_add")).status_code == 403
    assert admin_client.post(reverse(f"{prefix}_delete", args=[row.pk])).status_code == 403
    assert model._default_manager.filter(pk=row.pk).exists()


def test_a_raw_turn_vector_shows_its_dimensions_not_its_bytes(admin_client, rows):
    row = rows[RawTurnVector]
    page = admin_client.get(reverse("admin:recall_rawturnvector_change", args=[row.pk]))
    assert "test-model" in page.text and row.embedding not in page.text
    assert ">8<" in page.text.replace(" ", "").replace("\n", "")
