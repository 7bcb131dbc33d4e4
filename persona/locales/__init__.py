"""The persona layer's text per locale: ``TEXT`` (the long-term-memory markdown) and ``PROMPTS``."""
