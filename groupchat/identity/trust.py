"""Pure rules of the speaker-trust ledger: the wire's trust fields (reference §1.6), account ids, and
the effective trust of an account. No database here."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

TIERS = ("admin", "trusted", "normal", "none")
# The base of each rung of a platform's permission ladder; only an admin reaches owner-level trust.
TIER_BASE = {"admin": 1.0, "trusted": 0.7, "normal": 0.5, "none": 0.2}
# A reported base (platforms without a ladder) never reaches the admin rung.
MAX_REPORTED_BASE = 0.8
ACTIVITY_STEP = 0.001
ACTIVITY_MAX_BONUS = 0.02
ACTIVITY_EVENTS_MAX = 200  # one per message of a request at most
EVENT_COUNT_MAX = 1000
LINKED_ACCOUNTS_MAX = 8  # per platform per entity
LEGACY_IMPORT_CHUNK_MAX = 500
# Platforms whose trust lived in a plugin before the server kept it: until their legacy profiles are
# imported (``final``) or the barrier is waived, server-derived trust there is gated (never stamped,
# activity not counted), so an event already in a legacy profile cannot be counted twice.
LEGACY_BARRIERS = {"qq": "qq_auto_reply.business_config.speaker_trust_profiles.v1"}
GATED_LEGACY = "legacy_import_pending"

ACCOUNT_ID_MAX = 96
_PLATFORM = re.compile(r"[A-Za-z0-9_.-]+")
_ACTOR = re.compile(r"[A-Za-z0-9_.:@-]+")
_EVENT_ID = re.compile(r"[A-Za-z0-9_.:-]{8,96}")
_CHANNEL = re.compile(r"[a-z0-9_]{1,16}")
_SOURCE = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


class TrustFieldError(ValueError):
    """A trust field the routes answer with 422."""


def normalize_platform(raw: Any) -> str | None:
    if not isinstance(raw, str):
        return None
    value = raw.strip().lower()
    return value if value and len(value) <= 64 and _PLATFORM.fullmatch(value) else None


def normalize_account_id(raw: Any) -> str | None:
    """``<platform>:<actor>`` with the platform lowercased, or None when it is not a stable id."""
    if not isinstance(raw, str):
        return None
    value = raw.strip()
    if ":" not in value or len(value) > ACCOUNT_ID_MAX:
        return None
    platform, actor = value.split(":", 1)
    platform_ok = normalize_platform(platform)
    if platform_ok is None or not actor or not _ACTOR.fullmatch(actor):
        return None
    return f"{platform_ok}:{actor}"


def account_platform(account_id: str) -> str:
    return account_id.split(":", 1)[0]


def derived_entity_id(account_id: str) -> str:
    """The entity an account starts in: stable, so a re-created ledger gives the same ids."""
    return "ent_" + hashlib.sha256(account_id.encode()).hexdigest()[:24]


def valid_source(raw: Any) -> str | None:
    return raw if isinstance(raw, str) and _SOURCE.fullmatch(raw) else None


def _unit(raw: Any, name: str) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 <= raw <= 1:
        raise TrustFieldError(f"{name} must be a number 0..1")
    return float(raw)


@dataclass(frozen=True)
class TrustInput:
    """One segment's trust fields, validated: the legacy value or a server-derived source."""

    legacy: float | None = None
    tier: str | None = None
    base: float | None = None
    account_id: str | None = None
    events: tuple[tuple[str, int], ...] = ()
    channel: str | None = None
    is_owner: bool = False

    @property
    def server(self) -> bool:
        return self.tier is not None or self.base is not None

    def as_dict(self) -> dict[str, Any]:
        """The journal form (a pending keyed write replays exactly this)."""
        return {
            "legacy": self.legacy,
            "tier": self.tier,
            "base": self.base,
            "account_id": self.account_id,
            "events": [list(e) for e in self.events],
            "channel": self.channel,
            "is_owner": self.is_owner,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> TrustInput:
        return cls(
            legacy=raw.get("legacy"),
            tier=raw.get("tier"),
            base=raw.get("base"),
            account_id=raw.get("account_id"),
            events=tuple((str(i), int(c)) for i, c in raw.get("events") or []),
            channel=raw.get("channel"),
            is_owner=bool(raw.get("is_owner")),
        )


TRUST_FIELDS = (
    "speaker_trust",
    "speaker_tier",
    "speaker_base_trust",
    "speaker_activity_events",
    "speaker_channel",
    "speaker_is_owner",
)


def _events(raw: Any) -> tuple[tuple[str, int], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) > ACTIVITY_EVENTS_MAX:
        raise TrustFieldError(
            f"speaker_activity_events must be a list of at most {ACTIVITY_EVENTS_MAX} events"
        )
    seen: dict[str, int] = {}
    for item in raw:
        if not isinstance(item, dict):
            raise TrustFieldError("an activity event must be an object {id, count}")
        event_id, count = item.get("id"), item.get("count", 1)
        if not isinstance(event_id, str) or not _EVENT_ID.fullmatch(event_id):
            raise TrustFieldError("an activity event id must be 8..96 characters of [A-Za-z0-9_.:-]")
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= EVENT_COUNT_MAX:
            raise TrustFieldError(f"an activity event count must be an integer 1..{EVENT_COUNT_MAX}")
        seen.setdefault(event_id, count)  # the same id twice in one request is one event
    return tuple(seen.items())


def trust_input_parse(raw: dict[str, Any], *, defaults: dict[str, Any] | None = None) -> TrustInput | None:
    """The trust fields of one segment (or of the single shape); a batch's top-level fields apply to
    the segments that carry none of their own. None when there are none. Raises TrustFieldError."""
    own = {k: raw.get(k) for k in TRUST_FIELDS if raw.get(k) is not None}
    if not own and defaults:
        own = {k: defaults.get(k) for k in TRUST_FIELDS if defaults.get(k) is not None}
    if not own:
        return None
    legacy = _unit(own.get("speaker_trust"), "speaker_trust")
    tier = own.get("speaker_tier")
    if tier is not None and tier not in TIERS:
        raise TrustFieldError(f"speaker_tier must be one of {', '.join(TIERS)}")
    base = _unit(own.get("speaker_base_trust"), "speaker_base_trust")
    if tier is not None and base is not None:
        raise TrustFieldError("speaker_tier and speaker_base_trust are exclusive")
    server = tier is not None or base is not None
    if legacy is not None and server:
        raise TrustFieldError("speaker_trust is exclusive with the server-derived trust source")
    account_id = None
    if server:
        account_id = normalize_account_id(raw.get("speaker_id"))
        if account_id is None:
            raise TrustFieldError("trust source requires a valid speaker_id (<platform>:<actor>)")
    events = _events(own.get("speaker_activity_events"))
    if events and not server:
        raise TrustFieldError("speaker_activity_events requires a trust source")
    channel = own.get("speaker_channel")
    if channel is not None:
        if not isinstance(channel, str) or not _CHANNEL.fullmatch(channel):
            raise TrustFieldError("speaker_channel must match [a-z0-9_]{1,16}")
        if not server:
            raise TrustFieldError("speaker_channel requires a trust source")
    owner = own.get("speaker_is_owner", False)
    if not isinstance(owner, bool):
        raise TrustFieldError("speaker_is_owner must be a boolean")
    if owner and tier != "admin":
        raise TrustFieldError("speaker_is_owner requires the admin tier")
    return TrustInput(
        legacy=legacy,
        tier=tier,
        base=base,
        account_id=account_id,
        events=events,
        channel=channel,
        is_owner=owner,
    )


def effective_trust(
    *, tier: str | None, base: float | None, is_owner: bool, adjustment: float, message_count: int
) -> float | None:
    """An account's trust: its source's base, its legacy adjustment and a small activity bonus,
    clamped to 0..1; None without a source (the fact then carries no trust and arbitration abstains)."""
    if tier:
        start = TIER_BASE[tier]
    elif base is not None:
        start = min(base, MAX_REPORTED_BASE)
    else:
        return None
    if is_owner:
        start = 1.0
    bonus = min(ACTIVITY_MAX_BONUS, ACTIVITY_STEP * message_count)
    return round(max(0.0, min(1.0, start + adjustment + bonus)), 4)


@dataclass
class TrustOutcome:
    """The ``trust`` block of one segment, and its ``trust_events``."""

    resolved: float | None = None
    persisted: bool | None = None
    signals_applied: int = 0
    activity_applied: int = 0
    gated: str | None = None
    channel_collision: bool = False
    events: list[dict[str, Any]] = field(default_factory=list)

    def block(self) -> dict[str, Any]:
        return {
            "resolved": self.resolved,
            "persisted": self.persisted,
            "signals_applied": self.signals_applied,
            "activity_applied": self.activity_applied,
            "gated": self.gated,
            "channel_collision": self.channel_collision,
        }


def outcomes_combined(outcomes: list[TrustOutcome]) -> dict[str, Any]:
    """A batch's top-level block: false if any write failed, else true if any was written."""
    persisted = [o.persisted for o in outcomes if o.persisted is not None]
    resolved = {o.resolved for o in outcomes if o.resolved is not None}
    return {
        "resolved": resolved.pop() if len(resolved) == 1 else None,
        "persisted": all(persisted) if persisted else None,
        "signals_applied": sum(o.signals_applied for o in outcomes),
        "activity_applied": sum(o.activity_applied for o in outcomes),
        "gated": next((o.gated for o in outcomes if o.gated), None),
        "channel_collision": any(o.channel_collision for o in outcomes),
    }
