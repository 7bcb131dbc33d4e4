from __future__ import annotations

from typing import cast

import pytest

from nekomem.characters.models import Character
from tests.characters.factories import CharacterFactory


@pytest.fixture
def character() -> Character:
    return cast(Character, CharacterFactory(name="小天", master_name="阿凛"))
