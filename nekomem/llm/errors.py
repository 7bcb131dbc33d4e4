"""Exceptions raised by the LLM client.

Messages carry metadata only (tier, model, status, attempts): never the API key and never prompt or
reply text, because callers log them at INFO/WARNING. Reply text stays on attributes for DEBUG use.
"""

from __future__ import annotations


class LLMUnavailable(Exception):
    """The tier has no provider configured (no base_url or no model): skip the feature, do not retry."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class LLMError(Exception):
    """A terminal failure of one call, after the retries the failure allowed."""

    def __init__(
        self,
        message: str,
        *,
        tier: str = "",
        model: str = "",
        attempts: int = 0,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.tier = tier
        self.model = model
        self.attempts = attempts
        self.status = status
        # Set when a 429 asked for a longer wait than we are willing to block for.
        self.retry_after = retry_after


class LLMBadOutput(LLMError):
    """The provider answered, but not in the expected shape (no choices, not JSON, wrong JSON type)."""

    def __init__(self, message: str, *, raw_text: str = "", **meta: object) -> None:
        super().__init__(message, **meta)  # type: ignore[arg-type]
        # Kept off str(exc) on purpose: it may contain memory text.
        self.raw_text = raw_text


class LLMTruncated(LLMError):
    """The reply hit the output-token guard (finish_reason == "length").

    Distinct because callers count consecutive truncations (the history review pauses after 3).
    Not retried: the same prompt would truncate again.
    """

    def __init__(self, message: str, *, partial_text: str = "", **meta: object) -> None:
        super().__init__(message, **meta)  # type: ignore[arg-type]
        self.partial_text = partial_text
