"""In an install, /settle compresses under the settle lock as the original does (reference §1.2, §3.1)."""

from __future__ import annotations

import json
import threading

import pytest
from django.test import Client

from nekomem.journal.models import Job
from nekomem.runtime.switches import RECENT_AUTO_REVIEW, switch_set
from recent.jobs import COMPRESS_JOB
from recent.prompts import MEMO_PREFIX
from tests.recent.scripting import in_own_connection, post, summary, window
from tests.support.llm_server import json_content

EN_MEMO = MEMO_PREFIX["en"]


def chat(count: int, start: int = 0) -> list[dict]:
    return [
        {"type": "human" if i % 2 == 0 else "ai", "data": {"content": f"turn {i} about the garden"}}
        for i in range(start, start + count)
    ]


def settle(client):
    return client.post(
        "/settle/小天", data=json.dumps({"input_history": "[]"}), content_type="application/json"
    )


@pytest.fixture(autouse=True)
def _review_off(neko_root):
    switch_set(name=RECENT_AUTO_REVIEW, enabled=False)


@pytest.mark.django_db
def test_settle_then_new_dialog_shows_the_memo(client, llm_server, django_capture_on_commit_callbacks):
    assert post(client, "cache", "小天", chat(21)).json() == {"status": "cached", "count": 21}
    llm_server.script(summary("they planted tomatoes"))
    with django_capture_on_commit_callbacks(execute=True):
        assert settle(client).json() == {"status": "settled"}
    assert window("小天")[0] == ("system", EN_MEMO + "they planted tomatoes")
    assert len(window("小天")) == 10
    assert not Job.objects.filter(kind=COMPRESS_JOB).exists()
    text = client.get("/new_dialog/小天").content.decode()
    assert "they planted tomatoes" in text and "turn 0 about the garden" not in text


@pytest.mark.django_db
def test_a_settle_that_cannot_compress_keeps_the_turn_and_leaves_it_to_the_job(
    client, llm_server, django_capture_on_commit_callbacks
):
    post(client, "cache", "小天", chat(21))
    llm_server.script(*[json_content({"summary": ""})] * 3)
    llm_server.allow_unexpected = True  # the background job's own attempts
    with django_capture_on_commit_callbacks(execute=True):
        assert settle(client).json() == {"status": "settled"}
    assert len(window("小天")) == 21
    assert Job.objects.filter(kind=COMPRESS_JOB).exists()


@pytest.mark.django_db
def test_standalone_settle_still_leaves_compression_to_the_job(client, settings, llm_server):
    settings.NEKOMEM_NEKO_ROOT = None
    post(client, "cache", "小天", chat(21))
    assert settle(client).json() == {"status": "settled"}
    assert llm_server.bodies == []
    assert len(window("小天")) == 21


@pytest.mark.django_db(transaction=True)
def test_a_new_dialog_during_the_settle_waits_for_the_memo(client, llm_server):
    post(client, "cache", "小天", chat(21))
    rendered: list[str] = []

    def read_new_dialog():
        rendered.append(in_own_connection(lambda: Client().get("/new_dialog/小天").content.decode()))

    reader = threading.Thread(target=read_new_dialog)

    def start_reader_then_answer(body):
        reader.start()  # /settle holds the settle lock right now, so the reader has to wait
        return summary("settled memo")

    llm_server.script(start_reader_then_answer)
    assert settle(client).json() == {"status": "settled"}
    reader.join(timeout=30)
    assert len(rendered) == 1
    assert "settled memo" in rendered[0] and "turn 0 about the garden" not in rendered[0]
