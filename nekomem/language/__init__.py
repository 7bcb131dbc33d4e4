"""Languages: locale codes and resolution, plurals, per-locale tables, and text processing every layer
shares (tokens per script, normalising, chat message text, token counting). What one layer alone reads
lives in that layer: recall's time expressions (``recall/times``) and named days (``recall/calendar``)."""
