"""What the maintenance commands share: which characters they run for, and a progress bar."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.base import CommandError

from nekomem.characters.models import Character
from nekomem.characters.selectors import character_get, character_list


def command_characters(name: str | None) -> list[Character]:
    """The one character ``--character NAME`` names (an unknown name is an error), or every one."""
    if name is None:
        return list(character_list().order_by("pk"))
    character = character_get(name=name)
    if character is None:
        raise CommandError(f"no character named {name!r}")
    return [character]


@contextmanager
def progress_bar(*, total: int | None, desc: str, unit: str) -> Iterator[Any]:
    """A tqdm bar on stderr when it is a terminal (tqdm turns itself off otherwise), as import_memory's."""
    from tqdm import tqdm

    with tqdm(total=total, desc=desc, unit=unit, disable=None, file=sys.stderr, leave=False) as bar:
        yield bar
