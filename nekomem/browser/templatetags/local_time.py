"""``{{ value|local_time }}``: a moment the browser shows in the reader's own time zone, to the second.

The page carries the instant as ``<time datetime="…">`` (UTC, ISO 8601) and the browser shell's script
(templates/browser/base.html) rewrites its text in the browser's zone; without the script the text is
the server's zone, to the second. Values may be datetimes or ISO strings (recall results carry strings).
"""

from __future__ import annotations

from datetime import UTC, datetime

from django import template
from django.utils import timezone
from django.utils.html import format_html

register = template.Library()


def _moment(value: object) -> datetime | None:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str) and value:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
    else:
        return None
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment


@register.filter(is_safe=True)
def local_time(value: object) -> str:
    """The moment as a ``<time>`` element; a value that is no moment is shown as it is."""
    moment = _moment(value)
    if moment is None:
        return format_html("{}", value if value not in (None, "") else "—")
    shown = timezone.localtime(moment).strftime("%Y-%m-%d %H:%M:%S")
    instant = moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return format_html('<time datetime="{}" data-local-time>{}</time>', instant, shown)
