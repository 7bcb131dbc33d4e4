"""Every model of the project's apps has an admin page, and each page renders with a row in it.

The apps and their models are read from Django's registry, not listed here, so a model added later (a
new app included) is checked without touching this file. Its row comes from the app's factory-boy
factory (``tests/<app>/factories.py``, found by its model); a model with none gets a factory built
from its fields, so a new model is covered before anyone writes one.
"""

from __future__ import annotations

import importlib
import itertools
import pkgutil
import uuid
from pathlib import Path
from typing import Any

import factory
import pytest
from django.apps import AppConfig, apps
from django.conf import settings
from django.contrib import admin
from django.db import models
from django.urls import reverse
from django.utils import timezone

import tests

pytestmark = pytest.mark.django_db

# Apps that are not ours: Django's own, the task queue and the REST/schema libraries. Anything else
# installed from outside the repository fails ``test_every_installed_app_is_ours_or_named_here``.
THIRD_PARTY = {
    "admin",
    "auth",
    "contenttypes",
    "sessions",
    "messages",
    "staticfiles",
    "django_q",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
}


def _ours(app: AppConfig) -> bool:
    return Path(app.path).resolve().is_relative_to(Path(settings.BASE_DIR).resolve()) and not any(
        part in {".venv", "site-packages"} for part in Path(app.path).parts
    )


OUR_APPS = [app for app in apps.get_app_configs() if _ours(app)]
OUR_MODELS = sorted((model for app in OUR_APPS for model in app.get_models()), key=lambda m: m._meta.label)


def _factories() -> dict[type[models.Model], type[factory.django.DjangoModelFactory]]:
    """Every factory under ``tests/<app>/factories.py`` (or a sub-app's, ``tests/<app>/<sub>/``), by
    its model."""
    found: dict[type[models.Model], type[factory.django.DjangoModelFactory]] = {}
    for module_info in pkgutil.walk_packages(tests.__path__, "tests."):
        if not module_info.ispkg or module_info.name.count(".") > 2:
            continue
        try:
            module = importlib.import_module(f"{module_info.name}.factories")
        except ModuleNotFoundError as exc:
            if exc.name != f"{module_info.name}.factories":
                raise
            continue
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, factory.django.DjangoModelFactory)
                and value._meta.model is not None
                and value.__module__ == module.__name__
            ):
                found.setdefault(value._meta.model, value)
    return found


FACTORIES = _factories()
_counter = itertools.count(1)


def _value(field: models.Field) -> Any:
    """A valid value for a required field of a model that has no factory of its own."""
    n = next(_counter)
    if field.choices:
        return field.choices[0][0]
    if isinstance(field, models.ForeignKey | models.OneToOneField):
        return _row(field.related_model)
    if isinstance(field, models.BooleanField):
        return False
    if isinstance(field, models.DateTimeField):
        return timezone.now()
    if isinstance(field, models.DateField):
        return timezone.localdate()
    if isinstance(field, models.IntegerField):
        return n
    if isinstance(field, models.FloatField | models.DecimalField):
        return 0.5
    if isinstance(field, models.UUIDField):
        return uuid.uuid4()
    if isinstance(field, models.JSONField):
        return {}
    if isinstance(field, models.BinaryField):
        return b""
    if isinstance(field, models.CharField | models.TextField):
        return f"{field.name}-{n}"[: field.max_length or None]
    raise AssertionError(f"no value for {field.model._meta.label}.{field.name}: give the model a factory")


def _row(model: Any) -> models.Model:
    known = FACTORIES.get(model)
    if known is not None:
        return known.create()
    required = {
        field.name: _value(field)
        for field in model._meta.concrete_fields
        if not (
            (field.primary_key and not field.is_relation)  # a one-to-one key to its owner is required
            or field.null
            or field.has_default()
            or getattr(field, "auto_now", False)
            or getattr(field, "auto_now_add", False)
        )
    }
    built = factory.make_factory(model, FACTORY_CLASS=factory.django.DjangoModelFactory, **required)
    return built.create()


def test_every_installed_app_is_ours_or_named_here():
    outside = {app.label for app in apps.get_app_configs() if not _ours(app)}
    assert outside <= THIRD_PARTY, f"apps from outside the repository: {sorted(outside - THIRD_PARTY)}"
    assert {"characters", "journal", "facts", "recent", "recall"} <= {app.label for app in OUR_APPS}


@pytest.mark.parametrize("model", OUR_MODELS, ids=lambda m: m._meta.label)
def test_every_model_has_an_admin_page_that_renders_its_rows(admin_client, model):
    assert admin.site.is_registered(model), f"{model._meta.label} has no ModelAdmin"
    row = _row(model)
    info = (model._meta.app_label, model._meta.model_name)
    changelist = admin_client.get(reverse("admin:{}_{}_changelist".format(*info)))
    assert changelist.status_code == 200
    assert changelist.context["cl"].result_count >= 1
    change = admin_client.get(reverse("admin:{}_{}_change".format(*info), args=[row.pk]))
    assert change.status_code == 200
    assert change.context["original"].pk == row.pk
