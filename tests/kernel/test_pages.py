"""Keyset pages of plain queries: every row once, in key order, one statement a page."""

from __future__ import annotations

import pytest

from nekomem.characters.models import Character
from nekomem.pages import values_in_pages
from tests.characters.factories import CharacterFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("size", [1, 2, 3, 5, 100])
def test_every_row_once_in_key_order(size, django_assert_num_queries) -> None:
    made = [CharacterFactory.create().pk for _ in range(5)]
    rows = Character.objects.order_by("pk").values_list("pk", "name")
    # A page shorter than ``size`` ends the read; five rows in pages of five need a sixth, empty look.
    pages = len(made) // size + 1
    with django_assert_num_queries(pages):
        read = list(values_in_pages(rows, size=size))
    assert [pk for pk, _ in read] == sorted(made)
    assert [name for _, name in read] == list(Character.objects.order_by("pk").values_list("name", flat=True))


def test_a_filter_applies_to_every_page() -> None:
    made = [CharacterFactory.create(name=f"page-{i}") for i in range(6)]
    wanted = {c.pk for c in made[::2]}
    rows = Character.objects.filter(pk__in=wanted).order_by("pk").values_list("pk")
    assert [pk for (pk,) in values_in_pages(rows, size=1)] == sorted(wanted)
