"""Fixtures the recent layer's test modules share."""

from __future__ import annotations

import pytest

from tests.recent.scripting import post


@pytest.fixture
def run_commits(django_capture_on_commit_callbacks):
    """Post a route and run its on-commit hooks (the job enqueue; django-q runs tasks inline here)."""

    def run(client, route, name, messages, language="en"):
        with django_capture_on_commit_callbacks(execute=True):
            return post(client, route, name, messages, language=language)

    return run
