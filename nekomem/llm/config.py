"""Tier configuration, read from ``settings.LLM_TIERS`` at call time (so test overrides apply)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from django.conf import settings

from nekomem.llm.errors import LLMUnavailable

ThinkingStyle = Literal["both", "enable_thinking", "thinking_type", "none"]
THINKING_STYLES: tuple[ThinkingStyle, ...] = ("both", "enable_thinking", "thinking_type", "none")
FALLBACK_TIER = "summary"


@dataclass(frozen=True)
class TierConfig:
    tier: str
    base_url: str
    model: str
    # repr=False: a TierConfig in a traceback or log line must not print the key.
    api_key: str = field(default="", repr=False)
    thinking_style: ThinkingStyle = "both"

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


def _raw_tiers() -> dict[str, dict[str, str]]:
    return dict(getattr(settings, "LLM_TIERS", {}) or {})


def _known_tiers() -> set[str]:
    return set(getattr(settings, "LLM_TIER_NAMES", ())) | set(_raw_tiers())


def tier_config(tier: str) -> TierConfig:
    """The provider for ``tier``; a tier without its own base_url uses the summary tier's whole entry.

    The whole entry falls back (not key by key) so a tier with its own base_url never receives the
    summary tier's API key.
    """
    if tier not in _known_tiers():
        raise ValueError(f"unknown LLM tier {tier!r}")
    tiers = _raw_tiers()
    entry = tiers.get(tier) or {}
    source = tier
    if not entry.get("base_url") and tier != FALLBACK_TIER:
        entry = tiers.get(FALLBACK_TIER) or {}
        source = FALLBACK_TIER
    style = entry.get("thinking_style") or "both"
    if style not in THINKING_STYLES:
        raise ValueError(f"LLM tier {source!r}: thinking_style must be one of {THINKING_STYLES}")
    return TierConfig(
        tier=tier,
        base_url=(entry.get("base_url") or "").strip(),
        model=(entry.get("model") or "").strip(),
        api_key=(entry.get("api_key") or "").strip(),
        thinking_style=style,  # type: ignore[arg-type]
    )


def provider_status(tier: str) -> str | None:
    """None when ``tier`` can be called, else the reason it cannot (for health and status pages)."""
    return _unavailable_reason(tier_config(tier))


def require_provider(tier: str) -> TierConfig:
    cfg = tier_config(tier)
    reason = _unavailable_reason(cfg)
    if reason is not None:
        raise LLMUnavailable(reason)
    return cfg


def _unavailable_reason(cfg: TierConfig) -> str | None:
    return None if cfg.configured else f"no provider for tier {cfg.tier}"
