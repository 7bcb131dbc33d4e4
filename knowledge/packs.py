"""A knowledge pack as the original's schema v1 defines it (reference §1.8): pure functions, no ORM.

``pack_decode`` turns the uploaded bytes into a ``Pack`` or raises ``PackRejected`` with one of the
original's reasons; ``pack_canonical_bytes`` is the form that is kept (sorted keys, both ``terms``
roles present), so the same pack always hashes the same. Over-long text is cut to its limit, as the
original does; over-long lists are rejected.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 1
MATERIAL_TYPES = ("knowledge", "corpus")
TERM_ROLES = ("alias", "recognition")

MAX_PACK_BYTES = 10 * 1024 * 1024
# The import route reads at most this much body (multipart framing included) before 413.
MAX_PACK_BODY_BYTES = MAX_PACK_BYTES + 64 * 1024
MAX_ENTRIES_PER_PACK = 5_000
MAX_TITLE_CHARS = 500
MAX_SUMMARY_CHARS = 4_000
MAX_CONTENT_CHARS = 80_000
MAX_TERM_CHARS = 300
MAX_TERMS_PER_ROLE = 64
MAX_TAG_CHARS = 100
MAX_TAGS_PER_ENTRY = 32
MAX_SOURCE_NAME_CHARS = 200
MAX_SOURCE_FIELD_CHARS = 500

# Capacities of the whole store.
MAX_PACKS = 200
MAX_TOTAL_ENTRIES = 20_000
MAX_TOTAL_CHUNKS = 20_000
MAX_CHUNKS_PER_PACK = 10_000
MAX_TOTAL_PACK_BYTES = 64 * 1024 * 1024

PACK_KEYS = frozenset({"schema_version", "pack_id", "material_type", "source", "entries"})
ENTRY_KEYS = frozenset({"title", "terms", "tags", "summary", "content"})
SOURCE_KEYS = frozenset({"name", "homepage", "license"})

PACK_ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{1,63}")

# Every reason a pack (or its import) can be refused with.
REJECTION_REASONS = (
    "invalid_json",
    "invalid_pack",
    "unexpected_pack_field",
    "unsupported_schema_version",
    "invalid_pack_id",
    "invalid_material_type",
    "invalid_source",
    "invalid_entries",
    "too_many_entries",
    "invalid_entry",
    "unexpected_entry_field",
    "duplicate_title",
    "pack_too_large",
    "too_many_chunks",
    "capacity_packs",
    "capacity_entries",
    "capacity_chunks",
    "capacity_bytes",
)


class PackRejected(ValueError):
    """The pack is refused; ``reason`` is the original's machine-readable code."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(detail or reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class PackSource:
    name: str
    homepage: str = ""
    license: str = ""


@dataclass(frozen=True, slots=True)
class PackEntry:
    title: str
    content: str
    summary: str = ""
    aliases: tuple[str, ...] = ()
    recognition: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return title_key(self.title)

    def payload(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "terms": {"alias": list(self.aliases), "recognition": list(self.recognition)},
            "tags": list(self.tags),
            "summary": self.summary,
            "content": self.content,
        }


@dataclass(frozen=True, slots=True)
class Pack:
    pack_id: str
    material_type: str
    source: PackSource
    entries: tuple[PackEntry, ...] = field(default_factory=tuple)


# --- text ---------------------------------------------------------------------------------------------

# Control characters and lone surrogates (JSON may carry "\ud800", which UTF-8 cannot encode).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
# Characters that render as nothing: an invisible prefix must not hide a role marker.
_INVISIBLE = (
    "\x80-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
)
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")
_CHAT_TOKEN = re.compile(
    r"<\|\s*(?:im_start|im_end|im_sep|endoftext|system|user|assistant|"
    r"start_header_id|end_header_id|eot_id|begin_of_text)\s*\|>",
    re.IGNORECASE,
)
_ROLE_MARKER = re.compile(r"(?im)^[ \t]*(?:system|developer|assistant|user|human)[ \t]*[:：]")
_LINE_BREAKS = str.maketrans({"\u0085": "\n", "\u2028": "\n", "\u2029": "\n", "\r": "\n"})
_LINE_BREAK_CHARS = ("\u0085", "\u2028", "\u2029", "\r")
# Runs that change when collapsed to one space: a lone space is left as it is (most of a text's
# matches otherwise, each replaced by itself).
_SPACES = re.compile(r"[ \t]{2,}|\t")
_BLANK_LINES = re.compile(r"\n{3,}")
_WHITESPACE = re.compile(r"\s+")
# Removing one token can join the halves of another (<|im_<|im_end|>start|>): repeat, but boundedly.
_MARKUP_PASSES = 16


def strip_chat_markup(text: str) -> str:
    """Chat-control tokens and line-leading role markers removed until nothing changes."""
    if any(char in text for char in _LINE_BREAK_CHARS):  # a translation table walks every character
        text = text.translate(_LINE_BREAKS)
    text = _INVISIBLE_RE.sub("", text)
    for _ in range(_MARKUP_PASSES):
        cleaned = _ROLE_MARKER.sub("", _CHAT_TOKEN.sub("", text))
        if cleaned == text:
            return cleaned
        text = cleaned
    # Deliberately nested markup: defuse what is left instead of scanning forever.
    return _ROLE_MARKER.sub(lambda m: m.group(0)[:-1] + "\u2236", text.replace("<", "\u2039"))


def clean_text(value: object, *, max_chars: int) -> str:
    """Third-party text as it is stored: NFC (NFKC would rewrite full-width CJK punctuation), no control
    characters or chat markup, spaces collapsed, at most one blank line in a row, cut to ``max_chars``."""
    text = unicodedata.normalize("NFC", str(value or "")).replace("\r\n", "\n")
    text = strip_chat_markup(_CONTROL.sub("", text))
    # One pass over the text, not one a line ([ \t] never spans a line break, so the lines come out alike).
    text = "\n".join(line.strip() for line in _SPACES.sub(" ", text).split("\n"))
    return _BLANK_LINES.sub("\n\n", text).strip()[:max_chars].strip()


def one_line(value: object, *, max_chars: int) -> str:
    return _WHITESPACE.sub(" ", clean_text(value, max_chars=max_chars)).strip()[:max_chars]


def title_key(value: object) -> str:
    """What makes a title unique in its pack: NFKC, whitespace collapsed, casefolded."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", str(value or ""))).strip().casefold()


def pack_id_is_valid(value: object) -> bool:
    # fullmatch: "$" alone would let a trailing newline through.
    return isinstance(value, str) and PACK_ID_PATTERN.fullmatch(value) is not None


# --- the pack -----------------------------------------------------------------------------------------


def _mapping(value: object, reason: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise PackRejected(reason)
    return value


def _strings(values: object, *, max_items: int, max_chars: int) -> tuple[str, ...]:
    # Only a missing (or null) list defaults to empty; "" or {} is malformed.
    if values is None:
        return ()
    if not isinstance(values, list) or len(values) > max_items:
        raise PackRejected("invalid_entry")
    kept: list[str] = []
    for value in values:
        if not isinstance(value, str):
            raise PackRejected("invalid_entry")
        text = one_line(value, max_chars=max_chars)
        if text and text not in kept:
            kept.append(text)
    return tuple(kept)


def entry_parse(raw: object) -> PackEntry:
    entry = _mapping(raw, "invalid_entry")
    if not set(entry) <= ENTRY_KEYS:
        raise PackRejected("unexpected_entry_field")
    for name in ("title", "summary", "content"):
        if name in entry and entry[name] is not None and not isinstance(entry[name], str):
            raise PackRejected("invalid_entry")
    title = one_line(entry.get("title"), max_chars=MAX_TITLE_CHARS)
    content = clean_text(entry.get("content"), max_chars=MAX_CONTENT_CHARS)
    if not title or not content:
        raise PackRejected("invalid_entry", "title and content are required")
    terms = entry.get("terms")
    terms = _mapping({} if terms is None else terms, "invalid_entry")
    if not set(terms) <= set(TERM_ROLES):
        raise PackRejected("unexpected_entry_field")
    return PackEntry(
        title=title,
        content=content,
        summary=clean_text(entry.get("summary"), max_chars=MAX_SUMMARY_CHARS),
        aliases=_strings(terms.get("alias"), max_items=MAX_TERMS_PER_ROLE, max_chars=MAX_TERM_CHARS),
        recognition=_strings(
            terms.get("recognition"), max_items=MAX_TERMS_PER_ROLE, max_chars=MAX_TERM_CHARS
        ),
        tags=_strings(entry.get("tags"), max_items=MAX_TAGS_PER_ENTRY, max_chars=MAX_TAG_CHARS),
    )


def pack_parse(payload: object) -> Pack:
    """A decoded pack, validated and normalised, or ``PackRejected``."""
    pack = _mapping(payload, "invalid_pack")
    if set(pack) != PACK_KEYS:
        raise PackRejected("unexpected_pack_field")
    version = pack["schema_version"]
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        raise PackRejected("unsupported_schema_version")
    if not pack_id_is_valid(pack["pack_id"]):
        raise PackRejected("invalid_pack_id")
    if pack["material_type"] not in MATERIAL_TYPES:
        raise PackRejected("invalid_material_type")
    source = _mapping(pack["source"], "invalid_source")
    if not set(source) <= SOURCE_KEYS or any(not isinstance(value, str) for value in source.values()):
        raise PackRejected("invalid_source")
    pack_source = PackSource(
        name=one_line(source.get("name"), max_chars=MAX_SOURCE_NAME_CHARS),
        homepage=one_line(source.get("homepage"), max_chars=MAX_SOURCE_FIELD_CHARS),
        license=one_line(source.get("license"), max_chars=MAX_SOURCE_FIELD_CHARS),
    )
    if not pack_source.name:
        raise PackRejected("invalid_source")
    raw_entries = pack["entries"]
    if not isinstance(raw_entries, list) or not raw_entries:
        raise PackRejected("invalid_entries")
    if len(raw_entries) > MAX_ENTRIES_PER_PACK:
        raise PackRejected("too_many_entries")
    entries: list[PackEntry] = []
    seen: set[str] = set()
    for raw in raw_entries:
        entry = entry_parse(raw)
        if entry.key in seen:
            raise PackRejected("duplicate_title", entry.title)
        seen.add(entry.key)
        entries.append(entry)
    return Pack(
        pack_id=str(pack["pack_id"]),
        material_type=str(pack["material_type"]),
        source=pack_source,
        entries=tuple(entries),
    )


def pack_decode(raw: bytes) -> Pack:
    """UTF-8 JSON bytes (a BOM is accepted), at most 10 MiB, as a validated ``Pack``."""
    if len(raw) > MAX_PACK_BYTES:
        raise PackRejected("pack_too_large")
    try:
        payload = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise PackRejected("invalid_json") from exc
    return pack_parse(payload)


def pack_from_canonical(raw: bytes) -> Pack:
    """Canonical bytes this store wrote itself (a staged import, its sha256 checked) as a ``Pack``,
    without validating and normalising every text again: they are already what validation made them,
    and doing it twice was a third of a 5 000-entry import."""
    payload = json.loads(raw.decode("utf-8"))
    source = payload["source"]
    return Pack(
        pack_id=payload["pack_id"],
        material_type=payload["material_type"],
        source=PackSource(name=source["name"], homepage=source["homepage"], license=source["license"]),
        entries=tuple(
            PackEntry(
                title=entry["title"],
                content=entry["content"],
                summary=entry["summary"],
                aliases=tuple(entry["terms"]["alias"]),
                recognition=tuple(entry["terms"]["recognition"]),
                tags=tuple(entry["tags"]),
            )
            for entry in payload["entries"]
        ),
    )


def pack_canonical_bytes(pack: Pack) -> bytes:
    """The form that is kept and hashed: sorted keys, compact, both ``terms`` roles present."""
    payload = {
        "schema_version": SCHEMA_VERSION,
        "pack_id": pack.pack_id,
        "material_type": pack.material_type,
        "source": {
            "name": pack.source.name,
            "homepage": pack.source.homepage,
            "license": pack.source.license,
        },
        "entries": [entry.payload() for entry in pack.entries],
    }
    return json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def pack_sha256(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()
