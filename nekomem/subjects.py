"""Group-chat subjects (reference §1.6): who a scoped row is about, and the managers that keep them apart.

A subject is ``{subject_kind, subject_id, scope?}``; its key is ``<kind>:<subject_id>``. Every layer's rows
carry that key in a ``subject_key`` column ("" = the master's private memory). Each layer's default manager
(``objects``) sees only private rows, so no unscoped selector, pool, page or render can return a third
party's row by forgetting a filter; the scoped routes, export/import and forgetting use ``with_subjects``.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any, TypeVar

from django.db import models

SUBJECT_KINDS = ("group_chat", "participant", "group_participant")
PART_MAX = 256
LEGACY_PRIVATE = "legacy_private"
SECTION_PREFIX = "@subject/"
KEY_MAX = 600  # kind (17) + ":" + a 256-character id, with room for the original's longer ids
SUBJECTS_MAX = 8  # subjects per request: one group plus its members (§1.6)

_M = TypeVar("_M", bound=models.Model)


class SubjectError(ValueError):
    """A subject that the routes answer with 422."""


@dataclass(frozen=True)
class Subject:
    kind: str
    subject_id: str
    scope: str

    @property
    def key(self) -> str:
        return subject_key_of(self.kind, self.subject_id)

    @property
    def platform(self) -> str:
        return self.subject_id.split(":", 1)[0]

    @property
    def section(self) -> str:
        return SECTION_PREFIX + self.key

    @property
    def default_scope(self) -> bool:
        return self.scope == self.key

    def as_dict(self) -> dict[str, str]:
        return {"subject_kind": self.kind, "subject_id": self.subject_id, "scope": self.scope}


def subject_key_of(kind: str, subject_id: str) -> str:
    return f"{kind}:{subject_id}"


def _part(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise SubjectError(f"{name} must be a string")
    value = value.strip()
    if not value:
        raise SubjectError(f"{name} must not be empty")
    if len(value) > PART_MAX:
        raise SubjectError(f"{name} is longer than {PART_MAX} characters")
    if any(unicodedata.category(ch) == "Cc" for ch in value):
        raise SubjectError(f"{name} contains control characters")
    return value


def subject_parse(raw: Any) -> Subject:
    """A request's subject object, trimmed and checked; raises SubjectError (a 422)."""
    if not isinstance(raw, dict):
        raise SubjectError("subject must be an object")
    kind = _part(raw.get("subject_kind"), "subject_kind")
    if kind not in SUBJECT_KINDS:
        raise SubjectError(f"subject_kind must be one of {', '.join(SUBJECT_KINDS)}")
    subject_id = _part(raw.get("subject_id"), "subject_id")
    key = subject_key_of(kind, subject_id)
    scope = key if raw.get("scope") is None else _part(raw.get("scope"), "scope")
    if scope == LEGACY_PRIVATE:
        raise SubjectError("the scope legacy_private is reserved for private memory")
    return Subject(kind=kind, subject_id=subject_id, scope=scope)


def subject_key_from_extra(extra: Any) -> str:
    """The key of a row whose file entry carries the original's optional subject fields."""
    if not isinstance(extra, dict):
        return ""
    kind, subject_id = extra.get("subject_kind"), extra.get("subject_id")
    if isinstance(kind, str) and kind and isinstance(subject_id, str) and subject_id:
        return subject_key_of(kind, subject_id)
    return ""


def subject_key_from_section(section: str) -> str:
    """``@subject/<key>`` (and the older ``@<kind>:<id>``) → the key; any other section is private."""
    if not section.startswith("@"):
        return ""
    rest = section[len(SECTION_PREFIX) :] if section.startswith(SECTION_PREFIX) else section[1:]
    return rest if ":" in rest else ""


class PrivateRowsManager(models.Manager[_M]):
    """The default manager of a layer's rows: the master's private memory only."""

    def get_queryset(self) -> models.QuerySet[_M]:
        return super().get_queryset().filter(subject_key="")


SUBJECTS_ALL = "*"  # a browser filter: every row, the master's and every subject's
SUBJECTS_ALL_WORD = "all"  # the same filter as a REST client writes it


def subject_filter_parse(raw: str) -> str:
    """The subject filter of the memory browser and the REST list routes: "" the master's private
    memory, ``all`` (or ``*``) every row, any other value one subject key (``<kind>:<subject_id>``).
    Returns what ``subject_rows`` takes; raises ``SubjectError`` for a value that cannot be a key."""
    if raw in (SUBJECTS_ALL, SUBJECTS_ALL_WORD):
        return SUBJECTS_ALL
    if raw == "":
        return ""
    kind, _, subject_id = raw.partition(":")
    if not kind or not subject_id or len(raw) > KEY_MAX or not raw.isprintable():
        raise SubjectError(
            f"subject must be empty (the master's memory), {SUBJECTS_ALL_WORD!r}, or a subject key "
            f"<kind>:<subject_id> of at most {KEY_MAX} printable characters"
        )
    return raw


def subject_rows(manager: models.Manager[_M], subject: str) -> models.QuerySet[_M]:
    """A ``with_subjects`` manager's rows for a filter: "" the private memory, ``SUBJECTS_ALL`` every
    row, any other value one subject key's rows."""
    rows = manager.all()
    return rows if subject == SUBJECTS_ALL else rows.filter(subject_key=subject)
