from __future__ import annotations

import pytest

from tests.support.browser import chromium, page  # noqa: F401


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so the page fixture knows to take a screenshot."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
