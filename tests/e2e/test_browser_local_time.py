"""Times in the memory browser read in the reader's own time zone, to the second (``|local_time`` and
the browser shell's script), in a real headless Chromium whose context is set to a time zone."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from urllib.parse import quote
from zoneinfo import ZoneInfo

import pytest

from tests.support.server_process import ServerProcess, server_started

pytestmark = pytest.mark.slow  # no django_db: the server has its own database (see browser.py)

CHARACTER = "小雪"
LAYOUT = Path(__file__).resolve().parents[1] / "fixtures" / "browser-layers"
SHOWN = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")  # to the second, no zone, no fraction


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with server_started(tmp_path_factory.mktemp("browser-local-time"), memory={CHARACTER: LAYOUT}) as server:
        yield server


def shown_times(chromium, url: str, zone: str) -> list[tuple[str, str]]:
    """(datetime attribute, text) of every ``<time>`` on the page, read in a context set to ``zone``."""
    context = chromium.new_context(timezone_id=zone)
    try:
        page = context.new_page()
        page.goto(url)
        times = page.locator("time[data-local-time]")
        return [
            (times.nth(i).get_attribute("datetime"), times.nth(i).inner_text()) for i in range(times.count())
        ]
    finally:
        context.close()


def in_zone(instant: str, zone: str) -> str:
    return datetime.fromisoformat(instant).astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M:%S")


@pytest.mark.parametrize("layer", ["facts", "recall/?q=图书馆"])
def test_a_page_shows_its_times_in_the_browsers_zone_to_the_second(
    server: ServerProcess, chromium, layer
) -> None:
    url = f"http://127.0.0.1:{server.port}/browse/{quote(CHARACTER)}/{layer}"
    tokyo = shown_times(chromium, url, "Asia/Tokyo")
    new_york = shown_times(chromium, url, "America/New_York")
    assert tokyo, "the page shows no time"
    for instant, text in tokyo:
        assert SHOWN.match(text) and text == in_zone(instant, "Asia/Tokyo"), (instant, text)
    for instant, text in new_york:
        assert text == in_zone(instant, "America/New_York"), (instant, text)
    # The same instants, read fourteen hours apart (thirteen in the northern summer).
    assert [instant for instant, _ in tokyo] == [instant for instant, _ in new_york]
    assert [text for _, text in tokyo] != [text for _, text in new_york]
