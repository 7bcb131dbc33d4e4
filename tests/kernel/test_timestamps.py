"""``iso_local`` writes a time as the original's files do: naive, in the server's zone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.test import override_settings

from nekomem.timestamps import iso_local, parse_iso


@override_settings(TIME_ZONE="Asia/Shanghai")
def test_an_aware_time_is_written_naive_in_the_servers_zone_and_read_back_the_same():
    moment = datetime(2026, 12, 7, 3, 4, 5, 123456, tzinfo=UTC)
    assert iso_local(moment) == "2026-12-07T11:04:05.123456"
    assert parse_iso(iso_local(moment)) == moment
    assert iso_local(None) is None


def test_a_naive_time_is_refused():
    with pytest.raises(ValueError, match="naive"):
        iso_local(datetime(2026, 12, 7, 3, 4, 5))
