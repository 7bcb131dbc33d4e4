"""Prompts of the reflections layer per locale (``PROMPTS``, the same keys in each)."""
