"""The pages of the memory browser, registered by the apps at start-up: each layer's pages under a
character, and the pages about no one character (shared by all of them) in the site's header."""

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


@dataclass(frozen=True)
class SitePage:
    slug: str  # what a page of its own marks as active
    title: str  # shown in the header, zh then en
    url_name: str  # the page's URL name; it takes no argument
    order: int  # header order


_pages: dict[str, LayerPage] = {}
_site_pages: dict[str, SitePage] = {}


def register_layer_page(page: LayerPage) -> None:
    _pages[page.slug] = page


def layer_pages() -> list[LayerPage]:
    return sorted(_pages.values(), key=lambda page: page.order)


def register_site_page(page: SitePage) -> None:
    _site_pages[page.slug] = page


def site_pages() -> list[SitePage]:
    return sorted(_site_pages.values(), key=lambda page: page.order)


# What an app adds to a character's overview page, by template variable: ``reader(name)`` (install
# mode: ``folder_refusals``, the memory folder's files of the character that were refused).
_overview_extras: dict[str, Callable[[str], object]] = {}


def register_overview_extra(key: str, reader: Callable[[str], object]) -> None:
    _overview_extras[key] = reader


def overview_extras(name: str) -> dict[str, object]:
    return {key: reader(name) for key, reader in _overview_extras.items()}
