"""The recent layer's text per locale: ``TEXT`` (what game flows and the memo read) and ``PROMPTS``."""
