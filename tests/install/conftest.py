from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "neko-install"
INSTANCE_ID = "launch-7f3c2a9e"
CSRF_TOKEN = "csrf-4b1d8e6f0a2c"


@pytest.fixture
def neko_root(tmp_path, settings) -> Iterator[Path]:
    """A copy of the install folder fixture, with the launcher's environment in the settings."""
    from install.sync import characters_sync_forget

    root = tmp_path / "N.E.K.O"
    shutil.copytree(FIXTURE, root)
    settings.NEKOMEM_NEKO_ROOT = root
    settings.NEKO_INSTANCE_ID = INSTANCE_ID
    settings.NEKO_AUTOSTART_CSRF_TOKEN = CSRF_TOKEN
    characters_sync_forget()
    yield root
    characters_sync_forget()
