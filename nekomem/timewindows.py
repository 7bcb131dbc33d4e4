"""Time expressions → windows: moved to ``nekomem.language.times`` (one module per locale over shared
window arithmetic). This name stays for the importers that know it."""

from nekomem.language.times import Found, TimeWindow, find_time_expression, parse_time_window

__all__ = ["Found", "TimeWindow", "find_time_expression", "parse_time_window"]
