"""The recent layer's rows are browsable in the admin but written only by services."""

from __future__ import annotations

import pytest
from django.db.models import Model
from django.test import Client
from django.urls import reverse

from recent.models import RawMessage, RecentMessage

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored_turn(post_history) -> None:
    post_history("cache", "小天", ("human", "我今天去了图书馆"), ("ai", "看了什么书呀？"))


@pytest.mark.usefixtures("stored_turn")
@pytest.mark.parametrize("model", [RecentMessage, RawMessage])
def test_window_and_raw_log_rows_are_read_only(admin_client: Client, model: type[Model]) -> None:
    row = model._default_manager.first()
    assert row is not None
    name = model._meta.model_name
    assert admin_client.get(reverse(f"admin:recent_{name}_change", args=[row.pk])).status_code == 200
    assert admin_client.get(reverse(f"admin:recent_{name}_add")).status_code == 403
    assert (
        admin_client.post(reverse(f"admin:recent_{name}_delete", args=[row.pk]), {"post": "yes"}).status_code
        == 403
    )
    assert model._default_manager.filter(pk=row.pk).exists()
