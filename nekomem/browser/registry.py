"""The layer pages of the memory browser, registered by each layer app at start-up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class LayerPage:
    slug: str  # the path segment under /browse/<name>/
    title: str  # shown in the tabs and on the front door, zh then en
    url_name: str  # the page's URL name; it takes the character's ``name``
    order: int  # tab order
    # Rows this layer holds for a character (by id), for the front door; None: nothing to count.
    count: Callable[[int], int] | None = None


_pages: dict[str, LayerPage] = {}


def register_layer_page(page: LayerPage) -> None:
    _pages[page.slug] = page


def layer_pages() -> list[LayerPage]:
    return sorted(_pages.values(), key=lambda page: page.order)
