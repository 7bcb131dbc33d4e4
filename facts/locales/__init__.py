"""Prompts of the facts layer per locale (``PROMPTS``, the same keys in each)."""
