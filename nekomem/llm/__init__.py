"""The LLM client: tiers, retries, lenient JSON. Plain data in and out; no business logic."""

from nekomem.llm.client import MAX_COMPLETION_TOKENS, chat, chat_json, reset_compat_cache
from nekomem.llm.config import TierConfig, provider_status, tier_config
from nekomem.llm.errors import LLMBadOutput, LLMError, LLMTruncated, LLMUnavailable

__all__ = [
    "MAX_COMPLETION_TOKENS",
    "LLMBadOutput",
    "LLMError",
    "LLMTruncated",
    "LLMUnavailable",
    "TierConfig",
    "chat",
    "chat_json",
    "provider_status",
    "reset_compat_cache",
    "tier_config",
]
