"""Compression against real concurrent writes made while the LLM "thinks" (other thread, other
connection), so these tests commit for real."""

from __future__ import annotations

import threading

import pytest
from django.test import Client

from nekomem.characters.models import Character
from nekomem.runtime.switches import RECENT_AUTO_REVIEW, switch_set
from recent.compression import window_compress
from recent.prompts import MEMO_PREFIX
from tests.recent.scripting import in_own_connection, post, summary, window
from tests.support.dataset import english_messages, long_english_chat

pytestmark = pytest.mark.django_db(transaction=True)

EN_MEMO = MEMO_PREFIX["en"]


@pytest.fixture(autouse=True)
def _review_off(db):
    switch_set(name=RECENT_AUTO_REVIEW, enabled=False)


def test_append_during_the_call_is_kept_after_the_splice(client, llm_server):
    post(client, "cache", "Mel", english_messages(21))
    late = english_messages(2, start=50)

    def append_then_answer(body):
        in_own_connection(lambda: post(Client(), "cache", "Mel", late))
        return summary("memo")

    llm_server.script(append_then_answer)
    result = window_compress(character_id=Character.objects.get(name="Mel").pk)

    assert result.outcome == "spliced"
    expected_tail = [(m["type"], m["data"]["content"]) for m in [*english_messages(21)[-9:], *late]]
    assert window("Mel") == [("system", EN_MEMO + "memo"), *expected_tail]


def test_head_changed_during_the_call_makes_the_summary_moot(client, llm_server):
    post(client, "cache", "Mel", english_messages(21))
    character_id = Character.objects.get(name="Mel").pk
    inner: list[str] = []

    def compress_concurrently_then_answer(body):
        # Another worker compresses the same window first; its splice changes the head.
        inner.append(in_own_connection(lambda: window_compress(character_id=character_id).outcome))
        return summary("outer memo")

    llm_server.script(compress_concurrently_then_answer, summary("inner memo"))
    result = window_compress(character_id=character_id)

    assert inner == ["spliced"]
    assert result.outcome == "moot"
    assert window("Mel")[0] == ("system", EN_MEMO + "inner memo")
    assert len(window("Mel")) == 10


def test_new_dialog_during_renew_waits_for_the_memo(client, llm_server):
    rendered: list[str] = []

    def read_new_dialog():
        rendered.append(in_own_connection(lambda: Client().get("/new_dialog/Mel").content.decode()))

    reader = threading.Thread(target=read_new_dialog)

    def start_reader_then_answer(body):
        reader.start()  # /renew holds the settle lock right now, so the reader has to wait
        return summary("renew memo")

    post(client, "cache", "Mel", english_messages(1))  # the character exists before the reader looks it up
    llm_server.script(start_reader_then_answer)
    assert post(client, "renew", "Mel", english_messages(20, start=1)).json() == {"status": "processed"}
    reader.join(timeout=30)

    assert len(rendered) == 1
    assert EN_MEMO + "renew memo" in rendered[0]
    assert long_english_chat()[0]["text"] not in rendered[0]
