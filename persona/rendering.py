"""The long-term-memory markdown of ``/new_dialog`` and ``/get_settings`` (reference §5.1 step 5).

Sections, in order, joined by a blank line: one per persona section in the file's key order
(protected entries first in file order, capped at 80; then the kept non-protected entries by score);
pending and active-confirmed reflections (one 2000-token pool); the older-memories block; the
"don't volunteer" section (suppressed items, capped at 40). Reads only: a lapsed suppression simply
stops counting here before the refresh clears it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from nekomem.characters.models import Character
from nekomem.characters.selectors import character_memory_touched
from nekomem.language.counting import count_tokens
from nekomem.language.plurals import plural
from nekomem.language.resolution import master_display_name
from nekomem.language.tables import load_locale_tables
from persona.models import CHANGE_POOL, PersonaEntry, PersonaSection, PersonaState
from persona.services.entries import legacy_lines
from persona.services.mentions import suppression_active
from persona.services.promotion import reflection_evidence
from persona.services.records import META_SECTION, score_of, token_cache_fresh
from reflections.models import RECALL_POOL as REFLECTION_POOL
from reflections.models import Reflection
from reflections.selectors import evidence_score

PROTECTED_MAX = 80
SUPPRESSED_MAX = 40
PERSONA_TOKENS = 2000
REFLECTION_TOKENS = 2000
PAST_STATE_AFTER = timedelta(days=7)
PAST_EPISODE_AFTER = timedelta(days=3)

# What the render reads; the JSON columns and vectors stay in the database.
_EVIDENCE_FIELDS = (
    "reinforcement",
    "disputation",
    "rein_last_signal_at",
    "disp_last_signal_at",
    "user_fact_reinforce_count",
)
_ENTRY_FIELDS = (
    "section",
    "text",
    "protected",
    "suppress",
    "suppressed_at",
    "token_count",
    "token_count_text_sha256",
    "token_count_tokenizer",
    *_EVIDENCE_FIELDS,
)
_REFLECTION_FIELDS = (
    "text",
    "status",
    "temporal_scope",
    "created_at",
    "event_start_at",
    "event_end_at",
    "suppress",
    "suppressed_at",
    *_EVIDENCE_FIELDS,
)

_TEXT: dict[str, dict[str, Any]] = load_locale_tables("persona.locales")


def _t(language: str, key: str, **values: object) -> str:
    return str(_TEXT.get(language, _TEXT["en"])[key]).format(**values)


def _ago(language: str, key: str, n: int) -> str:
    return plural(language, _TEXT.get(language, _TEXT["en"])[key], n)


@lru_cache(maxsize=50_000)
def _text_tokens(text: str) -> int:
    # Reflections carry no token cache of their own (and an imported entry's may be stale): count each
    # distinct text once per process.
    return count_tokens(text)


def _entry_tokens(entry: PersonaEntry) -> int:
    return entry.token_count or 0 if token_cache_fresh(entry) else _text_tokens(entry.text)


def age_label(language: str, anchor: datetime, now: datetime) -> str:
    days = max(0, (now - anchor).days)
    if days < 1:
        return _t(language, "now")
    if days < 7:
        return _ago(language, "days", days)
    if days < 30:
        return _ago(language, "weeks", days // 7)
    return _ago(language, "months", days // 30)


def _anchor(reflection: Reflection) -> datetime:
    return reflection.event_end_at or reflection.event_start_at or reflection.created_at


def is_past(reflection: Reflection, *, now: datetime) -> bool:
    scope = reflection.temporal_scope
    if scope == "past":
        return True
    if scope == "state":
        return now - _anchor(reflection) > PAST_STATE_AFTER
    if scope == "episode":
        return now - _anchor(reflection) > PAST_EPISODE_AFTER
    return False


def _section_header(section: PersonaSection, *, language: str, master: str, ai: str) -> str:
    if section.key in ("master", "neko", "relationship"):
        return _t(language, section.key, master=master, ai=ai)
    if section.key.startswith("@"):
        subject = section.extra.get("display_name") or section.key[1:]
        return _t(language, "scoped", subject=subject)
    return _t(language, "other", section=section.key)


def _budgeted(items: list[tuple[float, int, Any]], budget: int) -> list[Any]:
    """By score descending; stop at the first item that would overflow the budget."""
    kept, spent = [], 0
    for _, tokens, item in sorted(items, key=lambda row: -row[0]):
        if spent + tokens > budget:
            break
        spent += tokens
        kept.append(item)
    return kept


def _persona_blocks(
    *,
    sections: list[PersonaSection],
    entries: list[PersonaEntry],
    language: str,
    master: str,
    ai: str,
    now: datetime,
) -> tuple[list[str], list[PersonaEntry]]:
    """The section blocks and the suppressed non-protected entries."""
    protected = [e for e in entries if e.protected][:PROTECTED_MAX]
    suppressed = [e for e in entries if not e.protected and suppression_active(e, now=now)]
    open_entries = [e for e in entries if not e.protected and not suppression_active(e, now=now)]
    kept = _budgeted([(score_of(e, now=now), _entry_tokens(e), e) for e in open_entries], PERSONA_TOKENS)
    by_section: dict[str, list[PersonaEntry]] = {}
    for entry in [*protected, *kept]:
        by_section.setdefault(entry.section, []).append(entry)
    blocks = []
    for section in sections:
        if section.key == META_SECTION or not by_section.get(section.key):
            continue
        lines = [_section_header(section, language=language, master=master, ai=ai)]
        lines.extend(f"- {entry.text}" for entry in by_section[section.key])
        blocks.append("\n".join(lines))
    return blocks, suppressed


def _reflection_blocks(
    *,
    reflections: list[Reflection],
    hidden_texts: set[str],
    language: str,
    master: str,
    ai: str,
    now: datetime,
) -> tuple[list[str], list[Reflection]]:
    pool: list[tuple[float, int, Reflection]] = []
    past: list[Reflection] = []
    suppressed: list[Reflection] = []
    for reflection in reflections:
        if reflection.text in hidden_texts:
            continue
        score = evidence_score(reflection_evidence(reflection), now=now)
        if reflection.status == Reflection.Status.PENDING:
            pool.append((score, _text_tokens(reflection.text), reflection))
        elif suppression_active(reflection, now=now):
            suppressed.append(reflection)
        elif is_past(reflection, now=now):
            past.append(reflection)
        elif score > 0:
            pool.append((score, _text_tokens(reflection.text), reflection))
    kept = _budgeted(pool, REFLECTION_TOKENS)
    blocks = []
    for status, key in ((Reflection.Status.PENDING, "pending"), (Reflection.Status.CONFIRMED, "confirmed")):
        lines = [f"- {r.text}" for r in kept if r.status == status]
        if lines:
            blocks.append("\n".join([_t(language, key, ai=ai), *lines]))
    if past:
        lines = [f"- [{age_label(language, _anchor(r), now)}] {r.text}" for r in past]
        blocks.append(
            "\n".join(
                [
                    _t(language, "past_open"),
                    _t(language, "past_note", master=master),
                    *lines,
                    _t(language, "past_close"),
                ]
            )
        )
    return blocks, suppressed


def settings_text(*, character: Character, state: PersonaState | None, language: str) -> str:
    """The legacy ``settings.json`` as natural-language lines (the fallback when the persona is empty)."""
    if state is None or not state.legacy_settings:
        return ""
    return "\n".join(
        _t(language, "legacy", name=character.name, line=line)
        for _, line in legacy_lines(state.legacy_settings)
    )


# (character id, its created_at, name, master's name, language) → (memory_version, minute, markdown).
# Every write that changes what this renders bumps ``Character.memory_version`` in the database (so
# every process sees it) and logs its pool: persona writes the persona pool, reflection writes the
# reflection pool (a write that logs none counts as touching both). Most bumps are extraction's facts
# and the vector backfill, which this block does not show, so a newer version whose logged changes are
# all elsewhere keeps the render. What changes with time alone
# (decay, a lapsing suppression, age labels) is re-rendered each minute.
_rendered: dict[tuple[int, datetime, str, str, str], tuple[int, int, str]] = {}
_RENDERED_LIMIT = 10_000
_SHOWN_POOLS = (CHANGE_POOL, REFLECTION_POOL)


def rendered_forget() -> None:
    """Drop every cached render (a test's database starting over, an import into a running process)."""
    _rendered.clear()


def long_term_memory_markdown(
    *, character: Character, language: str, now: datetime, version: int | None = None
) -> str:
    """Persona, reflections, older memories and the suppressed section; "" when all are empty.

    ``version``: the ``memory_version`` the caller read with ``character`` just now (the working
    context reads it inside the settle lock), so the cache is checked without a read of its own.
    """
    if version is None:
        version = Character.objects.filter(pk=character.pk).values_list("memory_version", flat=True).first()
    version = version or 0
    key = (character.pk, character.created_at, character.name, character.master_name, language)
    minute = int(now.timestamp() // 60)
    hit = _rendered.get(key)
    if hit is not None and hit[1] == minute:
        if hit[0] == version:
            return hit[2]
        if hit[0] < version and not character_memory_touched(
            character_id=character.pk, after=hit[0], through=version, pools=_SHOWN_POOLS
        ):
            _rendered[key] = (version, minute, hit[2])
            return hit[2]
    markdown = _render(character=character, language=language, now=now)
    if len(_rendered) >= _RENDERED_LIMIT:
        _rendered.clear()
    _rendered[key] = (version, minute, markdown)
    return markdown


def _render(*, character: Character, language: str, now: datetime) -> str:
    master = master_display_name(character.master_name, language)
    ai = character.name
    sections = list(PersonaSection.objects.filter(character_id=character.pk).order_by("position", "pk"))
    entries = list(
        PersonaEntry.objects.filter(character_id=character.pk, archive_shard_path__isnull=True)
        .only(*_ENTRY_FIELDS)
        .order_by("position", "pk")
    )
    persona_blocks, suppressed_entries = _persona_blocks(
        sections=sections, entries=entries, language=language, master=master, ai=ai, now=now
    )
    reflections = list(
        Reflection.objects.filter(
            character_id=character.pk, status__in=(Reflection.Status.PENDING, Reflection.Status.CONFIRMED)
        )
        .only(*_REFLECTION_FIELDS)
        .order_by("created_at", "pk")
    )
    reflection_blocks, suppressed_reflections = _reflection_blocks(
        reflections=reflections,
        hidden_texts={e.text for e in suppressed_entries},
        language=language,
        master=master,
        ai=ai,
        now=now,
    )
    blocks = [*persona_blocks, *reflection_blocks]
    suppressed_texts = [e.text for e in suppressed_entries] + [r.text for r in suppressed_reflections]
    if suppressed_texts:
        lines = [f"- {text}" for text in suppressed_texts[:SUPPRESSED_MAX]]
        blocks.append("\n".join([_t(language, "suppressed", ai=ai), *lines]))
    return "\n\n".join(blocks)


def scoped_section_header(*, language: str, subject: str) -> str:
    """The header of a group-chat subject's block in ``scoped_context`` (the ``@`` section header)."""
    return _t(language, "scoped", subject=subject)
