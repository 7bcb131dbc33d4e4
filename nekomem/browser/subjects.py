"""The subject filter of every layer page: the master's private memory (the default), every row, or one
group-chat subject's rows (nekomem.subjects). The kernel knows no layer: the layer that owns the
subjects' records (recall) registers the function that lists them, with their counts."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest

from nekomem.subjects import SUBJECTS_ALL, SubjectError, subject_filter_parse


@dataclass(frozen=True)
class BrowserSubject:
    key: str
    kind: str
    subject_id: str
    scope: str
    display_name: str | None
    facts: int
    reflections: int
    persona: int  # entries of the subject's persona section
    corrections: int

    @property
    def name(self) -> str:
        """How a row names its subject: the display name, or the key."""
        return self.display_name or self.key

    @property
    def label(self) -> str:
        name = f"{self.display_name} · " if self.display_name else ""
        scope = "" if self.scope == self.key else f" · scope {self.scope}"
        return (
            f"{name}{self.kind} {self.subject_id}{scope} "
            f"(事实 facts {self.facts}, 反思 reflections {self.reflections}, "
            f"人设 persona {self.persona}, 更正 corrections {self.corrections})"
        )


SubjectLister = Callable[[int], list[BrowserSubject]]
_listers: list[SubjectLister] = []


def register_subject_lister(lister: SubjectLister) -> None:
    if lister not in _listers:
        _listers.append(lister)


def browser_subjects(character_id: int) -> list[BrowserSubject]:
    return [subject for lister in _listers for subject in lister(character_id)]


def subject_chosen(request: HttpRequest) -> str:
    """The page's ``subject`` parameter (``nekomem.subjects.subject_filter_parse``); anything that
    cannot be a key reads as private, so a bad link never shows more than the master's memory."""
    try:
        return subject_filter_parse(request.GET.get("subject", ""))
    except SubjectError:
        return ""


def subject_filter_context(request: HttpRequest, character_id: int) -> dict[str, Any]:
    """What the filter (``browser/subject_filter.html``) and the forget panel need."""
    chosen = subject_chosen(request)
    subjects = browser_subjects(character_id)
    current = next((s for s in subjects if s.key == chosen), None)
    return {
        "subject": chosen,
        "subjects_all": SUBJECTS_ALL,
        "subjects": subjects,
        "subject_current": current,
    }


def subject_names(rows: Iterable[Any], subjects: Iterable[BrowserSubject]) -> None:
    """Give each row (with a ``subject_key``) a ``subject_name`` for the page: "" for the master's."""
    names = {s.key: s.name for s in subjects}
    for row in rows:
        row.subject_name = names.get(row.subject_key, row.subject_key) if row.subject_key else ""
