"""The operator's admin pages list, filter and search every foundation model."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.urls import reverse

from nekomem.journal.models import OutboxOp

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored_turn(post_history):
    post_history("cache", "小天", ("human", "我今天去了图书馆"), ("ai", "看了什么书呀？"))


OUR_MODELS = [m for m in admin.site._registry if m._meta.app_label not in {"auth", "django_q"}]


@pytest.mark.usefixtures("stored_turn")
@pytest.mark.parametrize("model", OUR_MODELS)
def test_every_changelist_renders_with_search(admin_client, model):
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    assert admin_client.get(url).status_code == 200
    assert admin_client.get(url, {"q": "图书馆"}).status_code == 200


@pytest.mark.usefixtures("stored_turn")
def test_outbox_changelist_filters_by_status(admin_client):
    url = reverse("admin:journal_outboxop_changelist")
    # Inside the test transaction nothing commits, so the turn's op is still pending.
    pending = admin_client.get(url, {"status__exact": "pending"})
    assert pending.status_code == 200
    assert pending.context["cl"].result_count == OutboxOp.objects.filter(status="pending").count() == 1
    assert admin_client.get(url, {"status__exact": "done"}).context["cl"].result_count == 0


@pytest.mark.usefixtures("stored_turn")
def test_raw_log_search_finds_the_message(admin_client):
    url = reverse("admin:recent_rawmessage_changelist")
    assert admin_client.get(url, {"q": "图书馆"}).context["cl"].result_count == 1
