"""A real headless Chromium for browser tests: Debian's ``chromium-headless-shell`` driven by Playwright.

Playwright's own browser download does not work on our machines, so the browser comes from the
distribution (``.ci/run`` installs it when it is missing) and Playwright only drives it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

BROWSER_CANDIDATES = ("chromium-headless-shell", "chromium")
# Without these, Chromium keeps trying to reach Google's hosts, which this network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOT_DIR = Path(os.environ.get("NEKOMEM_SCREENSHOT_DIR", "var/screenshots"))


def chromium_executable() -> str | None:
    configured = os.environ.get("NEKOMEM_CHROMIUM")
    if configured:
        return configured
    for name in BROWSER_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    """One browser per test module; a CI run without one fails rather than skipping.

    Playwright's sync API keeps an event loop running in the main thread while the browser is
    open, and Django refuses database calls inside one: so browser tests use no test database
    (their server has its own), and the browser closes with its module.
    """
    from playwright.sync_api import sync_playwright

    executable = chromium_executable()
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail("no chromium-headless-shell: .ci/run installs it")
        pytest.skip("no chromium-headless-shell on this machine (apt-get install chromium-headless-shell)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(chromium, request) -> Iterator[object]:
    """A fresh browser context and page; a screenshot is kept under var/screenshots on failure."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        yield page
    finally:
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOT_DIR / f"{request.node.name}.png"), full_page=True)
        context.close()
