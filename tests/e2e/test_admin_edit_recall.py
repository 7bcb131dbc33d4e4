"""A fact edited in the Django admin is what every server process recalls next.

Two real servers (each started as ``make run`` starts it, one HTTP worker each) share one
database. Server A answers a query and caches the character's recall index; a superuser edits the
fact through server B's admin change form; server A's next answer has the new text, because the
admin's save goes through the same service as the REST API, which bumps the character's
``memory_version`` that every process's cache is keyed on.
"""

from __future__ import annotations

import re
from http.cookiejar import CookieJar
from pathlib import Path
from urllib.parse import urlencode
from urllib.request import HTTPCookieProcessor, OpenerDirector, build_opener

import pytest

from tests.e2e.recall_servers import FACTS, recalled_texts, two_servers_one_cached_index

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

PASSWORD = "admin-e2e-password"
_CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class AdminBrowser:
    """A superuser's browser on one server: a cookie jar, and the CSRF token of each form it reads."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.opener: OpenerDirector = build_opener(HTTPCookieProcessor(CookieJar()))

    def submit(self, path: str, fields: dict[str, str]) -> str:
        """Read the form at ``path``, post it with ``fields``; returns where the redirects ended."""
        with self.opener.open(self.base + path, timeout=30) as page:
            token = _CSRF_INPUT.search(page.read().decode())
        assert token is not None, f"no form at {path}"
        body = urlencode({**fields, "csrfmiddlewaretoken": token.group(1)}).encode()
        with self.opener.open(self.base + path, data=body, timeout=30) as answer:
            return answer.geturl().removeprefix(self.base)


def test_an_admin_edit_through_one_server_is_recalled_by_the_other(tmp_path: Path) -> None:
    with two_servers_one_cached_index(tmp_path, DJANGO_SUPERUSER_PASSWORD=PASSWORD) as (server_a, server_b):
        server_b.manage("createsuperuser", "--noinput", "--username", "root", "--email", "root@example.com")
        browser = AdminBrowser(server_b.port)
        assert (
            browser.submit("/admin/login/?next=/admin/", {"username": "root", "password": PASSWORD})
            == "/admin/"
        )
        assert server_a.database is not None
        [(pk,)] = server_a.database.query("SELECT id FROM facts_fact WHERE fact_id = %s", [FACTS[0][0]])
        # What the change form posts: every editable field (the entity became editable with the browser).
        edit = {
            "text": "主人养了一只柴犬，名字叫豆豆",
            "importance": "7",
            "entity": "master",
            "_save": "Save",
        }
        assert browser.submit(f"/admin/facts/fact/{pk}/change/", edit) == "/admin/facts/fact/"  # accepted

        after = recalled_texts(server_a.port, "柴犬豆豆")
        assert after and after[0] == "主人养了一只柴犬，名字叫豆豆"
        assert FACTS[0][1] not in recalled_texts(server_a.port, "橘猫团子")
