"""Install mode: nekomem inside a N.E.K.O. install (``NEKOMEM_NEKO_ROOT``).

Reads the install's config files into plain data, checks the launcher's credential and keeps the
memory folder in step. Knows no layer: layers register hooks and file handlers.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings


def install_root() -> Path | None:
    """The install's folder (holding ``config/`` and ``memory/``), or None when standalone."""
    return settings.NEKOMEM_NEKO_ROOT


def install_config_dir() -> Path | None:
    root = install_root()
    return root / "config" if root else None


def install_memory_dir() -> Path | None:
    root = install_root()
    return root / "memory" if root else None
