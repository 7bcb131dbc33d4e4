"""Per-locale string tables: each layer keeps one module per locale (``<layer>/locales/ja.py``) with a
``TEXT`` dict, the same keys in every locale. ``load_locale_tables`` gathers them; ``table_problems``
is what the tests assert empty (a missing key, or a placeholder one locale has and another lacks)."""

from __future__ import annotations

import importlib
import string
from collections.abc import Mapping
from typing import Any

from nekomem.language.codes import SUPPORTED_LANGUAGES


def module_name(language: str) -> str:
    """``zh-TW`` → ``zh_tw`` (a module name cannot hold a hyphen)."""
    return language.replace("-", "_").lower()


def load_locale_tables(package: str, attribute: str = "TEXT") -> dict[str, dict[str, Any]]:
    return {
        language: getattr(importlib.import_module(f"{package}.{module_name(language)}"), attribute)
        for language in SUPPORTED_LANGUAGES
    }


def placeholders(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in table.items():
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def table_problems(tables: Mapping[str, Mapping[str, Any]], reference: str = "en") -> list[str]:
    """Every locale against the reference: the same keys (nested tables flattened), each with the same
    placeholders, and no empty text."""
    base = _flatten(tables[reference])
    problems = [f"{language}: no table" for language in SUPPORTED_LANGUAGES if language not in tables]
    for language, table in tables.items():
        flat = _flatten(table)
        for key in sorted(base.keys() - flat.keys()):
            problems.append(f"{language}: missing {key}")
        for key in sorted(flat.keys() - base.keys()):
            problems.append(f"{language}: extra {key}")
        for key in sorted(base.keys() & flat.keys()):
            if not isinstance(flat[key], str):
                continue
            if placeholders(flat[key]) != placeholders(base[key]):
                problems.append(
                    f"{language}: {key} has {sorted(placeholders(flat[key]))}, "
                    f"{reference} has {sorted(placeholders(base[key]))}"
                )
            if not flat[key].strip() and base[key].strip():
                problems.append(f"{language}: {key} is empty")
    return problems
