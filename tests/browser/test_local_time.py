"""``|local_time``: the instant for the browser's script, and the server's zone to the second without it."""

from __future__ import annotations

from datetime import UTC, datetime

from django.template import Context, Template
from django.test import override_settings


def render(value: object) -> str:
    return Template("{{ value|local_time }}").render(Context({"value": value}))


@override_settings(TIME_ZONE="Asia/Shanghai")
def test_a_datetime_carries_its_instant_in_utc_and_the_servers_zone_to_the_second() -> None:
    moment = datetime(2026, 11, 20, 1, 30, 5, 123456, tzinfo=UTC)
    assert (
        render(moment) == '<time datetime="2026-11-20T01:30:05Z" data-local-time>2026-11-20 09:30:05</time>'
    )


@override_settings(TIME_ZONE="UTC")
def test_an_iso_string_with_microseconds_is_shown_to_the_second() -> None:
    # What recall results carry, and what the playground used to print as it was.
    shown = render("2026-11-20T09:30:00.654321+00:00")
    assert shown == '<time datetime="2026-11-20T09:30:00Z" data-local-time>2026-11-20 09:30:00</time>'


def test_what_is_no_moment_is_shown_as_it_is_and_escaped() -> None:
    assert render(None) == "—"
    assert render("") == "—"
    assert render("<b>soon</b>") == "&lt;b&gt;soon&lt;/b&gt;"
