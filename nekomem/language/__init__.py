"""Languages: locale codes, and (as they move here) tokens per script, time expressions, calendars."""
