"""External Markdown import (reference §1.4, §1.7): the reviewed entries of an OpenClaw or Hermes
workspace become persona statements (fused per entity by the LLM) and facts.

Facts with an ``event_date`` are appended with that day as their event time rather than going
through daily extraction: the main server already split the notes into reviewed lines, and a
second LLM pass over one line per call would cost far more than it adds."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from facts.services import ImportedFact, facts_import_append
from nekomem.characters.services import character_get_or_create, character_release_check
from nekomem.journal.causes import caused_by
from nekomem.llm import LLMError, LLMUnavailable
from persona.services import FusionInputTooLarge, fusion_input_check, persona_import_fuse

SOURCE_FORMATS = ("openclaw", "hermes")
ENTITIES = ("master", "neko", "relationship")
TARGETS = ("persona", "facts")
CANDIDATES_MAX = 1000
CANDIDATE_TEXT_MAX = 8000
# Everything the route accepts at once; past this the caller must split the import (413).
TOTAL_TEXT_MAX = 2_000_000


class ImportBadInput(ValueError):
    """400: a bad format, count or candidate."""


class ImportTooLarge(ValueError):
    """413 ``external_import_too_large``."""


@dataclass(frozen=True)
class Candidate:
    text: str
    entity: str
    target: str
    source_file: str
    event_date: date | None


@dataclass
class ImportRequest:
    character_name: str
    source_format: str
    imported_files: list[str]
    candidates: list[Candidate]
    warning_count: int = 0
    language: str | None = None


@dataclass
class ImportReport:
    added_persona: int = 0
    added_facts: int = 0
    skipped_duplicates: int = 0
    failed_entities: list[str] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        return bool(self.failed_entities)


def _candidate(raw: Any, index: int) -> Candidate:
    if not isinstance(raw, dict):
        raise ImportBadInput(f"candidates[{index}] must be an object")
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ImportBadInput(f"candidates[{index}].text must be a non-empty string")
    if len(text) > CANDIDATE_TEXT_MAX:
        raise ImportBadInput(f"candidates[{index}].text is longer than {CANDIDATE_TEXT_MAX} characters")
    entity = raw.get("entity") or "master"
    target = raw.get("target") or "persona"
    if entity not in ENTITIES:
        raise ImportBadInput(f"candidates[{index}].entity must be one of {', '.join(ENTITIES)}")
    if target not in TARGETS:
        raise ImportBadInput(f"candidates[{index}].target must be one of {', '.join(TARGETS)}")
    when = raw.get("event_date")
    event_date = None
    if when not in (None, ""):
        try:
            event_date = date.fromisoformat(str(when)[:10])
        except ValueError:
            raise ImportBadInput(f"candidates[{index}].event_date must be YYYY-MM-DD") from None
    source_file = raw.get("source_file") or ""
    if not isinstance(source_file, str):
        raise ImportBadInput(f"candidates[{index}].source_file must be a string")
    return Candidate(text.strip(), entity, target, source_file, event_date)


def import_request_parse(*, body: Any) -> ImportRequest:
    if not isinstance(body, dict):
        raise ImportBadInput("body must be a JSON object")
    name = body.get("character_name")
    if not isinstance(name, str) or not name.strip():
        raise ImportBadInput("character_name is required")
    source_format = body.get("source_format")
    if source_format not in SOURCE_FORMATS:
        raise ImportBadInput("source_format must be openclaw or hermes")
    files = body.get("imported_files") or []
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ImportBadInput("imported_files must be a list of strings")
    raw = body.get("candidates")
    if not isinstance(raw, list) or not raw:
        raise ImportBadInput(f"candidates must be a list of 1..{CANDIDATES_MAX}")
    if len(raw) > CANDIDATES_MAX:  # a bad count is 400 (§1.7); 413 is for too much text
        raise ImportBadInput(f"{len(raw)} candidates; at most {CANDIDATES_MAX} per import")
    candidates = [_candidate(item, i) for i, item in enumerate(raw)]
    if sum(len(c.text) for c in candidates) > TOTAL_TEXT_MAX:
        raise ImportTooLarge(f"more than {TOTAL_TEXT_MAX} characters of candidates")
    warnings = body.get("warning_count") or 0
    if not isinstance(warnings, int) or isinstance(warnings, bool) or warnings < 0:
        raise ImportBadInput("warning_count must be a non-negative integer")
    language = body.get("language") or body.get("render_language")
    return ImportRequest(
        character_name=name.strip(),
        source_format=source_format,
        imported_files=files,
        candidates=candidates,
        warning_count=warnings,
        language=language if isinstance(language, str) else None,
    )


@caused_by("markdown_import")
def external_markdown_import(*, request: ImportRequest) -> ImportReport:
    """Facts first (no LLM, deduplicated by text hash), then one fusion per entity. An entity whose
    fusion fails adds nothing and is reported, so the whole import can be sent again safely."""
    by_entity: dict[str, list[str]] = defaultdict(list)
    facts: list[ImportedFact] = []
    for c in request.candidates:
        if c.target == "persona":
            by_entity[c.entity].append(c.text)
        else:
            facts.append(ImportedFact(c.text, c.entity, c.event_date, c.source_file))
    try:
        for texts in by_entity.values():
            fusion_input_check(texts=texts)
    except FusionInputTooLarge as exc:
        raise ImportTooLarge(str(exc)) from exc
    # Fenced while the character is being released (a rename or delete follows): 409, nothing written.
    character_release_check(name=request.character_name)
    character = character_get_or_create(name=request.character_name)
    report = ImportReport()
    if facts:
        appended = facts_import_append(character_id=character.pk, items=facts)
        report.added_facts += appended.added
        report.skipped_duplicates += appended.skipped_duplicates
    language = request.language or character.language or "en"
    for entity in ENTITIES:
        if entity not in by_entity:
            continue
        try:
            fused = persona_import_fuse(
                character_id=character.pk, entity=entity, texts=by_entity[entity], language=language
            )
        except (LLMError, LLMUnavailable):
            report.failed_entities.append(entity)
            continue
        report.added_persona += fused.added
        report.skipped_duplicates += fused.skipped_duplicates
    return report
