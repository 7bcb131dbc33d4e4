from __future__ import annotations

import json

import pytest

from tests.support.llm_server import llm_server  # noqa: F401

DB_FIXTURES = ("db", "transactional_db", "live_server", "admin_client", "django_db_setup")


@pytest.fixture(autouse=True)
def _runtime_started(request):
    """Finish startup once (migrations checked, events reconciled) so routes leave restricted mode.

    Only for tests that use the test database: a pure test must never touch a real one.
    """
    uses_db = request.node.get_closest_marker("django_db") is not None or any(
        name in request.fixturenames for name in DB_FIXTURES
    )
    if not uses_db:
        return
    from nekomem.runtime.startup import startup_run
    from nekomem.runtime.state import is_ready

    if not is_ready():
        request.getfixturevalue("transactional_db" if "transactional_db" in request.fixturenames else "db")
        assert startup_run()


@pytest.fixture(autouse=True)
def _process_caches_forgotten():
    """Each test's database starts over, so per-process caches of database values must too."""
    from knowledge.query_log import knowledge_query_log_forget
    from knowledge.search.index_cache import knowledge_index_forget
    from nekomem.characters.services import character_id_forget
    from nekomem.runtime.status import vector_coverage_forget
    from nekomem.runtime.switches import switches_forget
    from persona.selectors import rendered_forget
    from recall import index_cache

    character_id_forget()
    # Keyed on the knowledge store's version counter, which starts over with each test's database.
    knowledge_index_forget()
    switches_forget()
    vector_coverage_forget()
    rendered_forget()
    # An import builds its characters' recall indexes in this process: a rolled-back test's character
    # key and version can come back in the next test, which must never be served that index.
    index_cache.clear()
    yield
    # Its background builder and poller, and the query log's writer, stop before the test's database goes.
    knowledge_index_forget()
    knowledge_query_log_forget()


@pytest.fixture
def internal_client(settings):
    """A loopback client that sends the shared secret the internal routes need."""
    from django.test import Client

    return Client(HTTP_AUTHORIZATION=f"Bearer {settings.NEKOMEM_API_TOKEN}")


@pytest.fixture(autouse=True)
def _recall_snapshots_in_tmp(settings, tmp_path_factory):
    """Saved recall indexes go to a directory of the test's own, never to the checkout's var/ (nor
    into ``tmp_path``, which a test may import as a root of character directories)."""
    settings.RECALL_SNAPSHOT_DIR = str(tmp_path_factory.mktemp("recall-index"))


def history(*pairs: tuple[str, str]) -> str:
    """Build an ``input_history`` JSON string from (type, content) pairs."""
    return json.dumps(
        [{"type": kind, "data": {"content": content}} for kind, content in pairs], ensure_ascii=False
    )


@pytest.fixture
def post_history(client):
    def post(route: str, name: str, *pairs: tuple[str, str], language: str | None = None):
        body: dict = {"input_history": history(*pairs)}
        if language:
            body["language"] = language
        return client.post(f"/{route}/{name}", data=json.dumps(body), content_type="application/json")

    return post


@pytest.fixture(autouse=True)
def _knowledge_folder_in_tmp(settings, tmp_path_factory):
    """The knowledge store writes its folder back on every change: to the test's own directory,
    never to the checkout's var/."""
    settings.NEKOMEM_KNOWLEDGE_DIR = tmp_path_factory.mktemp("knowledge")
