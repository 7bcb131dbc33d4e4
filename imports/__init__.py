"""Imports from elsewhere: an OpenClaw or Hermes Markdown workspace becomes persona statements and facts,
written through the persona and facts services. No recall happens here."""
