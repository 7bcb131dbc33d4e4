"""Issue 3's "done when": 60 real English turns (MemoryBank) through /cache, settled at each session's end.

The chat server caches every turn and settles when its session renews; here a session is 20 turns,
so the run settles three times and the last settle re-summarises the earlier memo.
"""

from __future__ import annotations

import pytest

from nekomem.language.messages import strip_bracketed
from recent.models import RawMessage
from recent.prompts import MEMO_PREFIX
from tests.recent.scripting import dispatcher, post, window
from tests.support.dataset import as_messages, conversation
from tests.support.llm_server import error

pytestmark = pytest.mark.django_db(transaction=True)

SESSION = 20


def run_conversation(client) -> list[dict]:
    messages = as_messages(conversation("memorybank-en")[:60])
    for index, message in enumerate(messages, start=1):
        assert post(client, "cache", "Mel", [message]).json() == {"status": "cached", "count": 1}
        if index % SESSION == 0:
            assert post(client, "settle", "Mel", []).json() == {"status": "settled"}
    return messages


def dialogue_lines(client) -> list[str]:
    body = client.get("/new_dialog/Mel").content.decode()
    return [line for line in body.split("\n") if " | " in line]


def test_sixty_turns_end_as_one_memo_and_the_last_nine(client, llm_server):
    llm_server.fallback = dispatcher("Emily and Mel talked about books, the park and her piano.")
    messages = run_conversation(client)

    memo = MEMO_PREFIX["en"] + "Emily and Mel talked about books, the park and her piano."
    assert window("Mel") == [("system", memo)] + [(m["type"], m["data"]["content"]) for m in messages[-9:]]
    lines = dialogue_lines(client)
    assert len(lines) == 10
    assert lines[0].endswith(memo)
    assert [line.split(" | ", 1)[1] for line in lines[1:]] == [
        strip_bracketed(m["data"]["content"]).strip() for m in messages[-9:]
    ]
    assert RawMessage.objects.filter(character__name="Mel").count() == 60
    summaries = [b for b in llm_server.bodies if b["model"] == "test-summary-model"]
    assert len(summaries) == 2  # the settles at turns 40 and 60; 20 messages do not compress
    assert MEMO_PREFIX["en"] in summaries[1]["messages"][1]["content"]  # the first memo was re-summarised


def test_sixty_turns_with_a_failing_provider_keep_every_turn(client, llm_server):
    llm_server.fallback = lambda body: error(500)
    llm_server.allow_unexpected = True
    messages = run_conversation(client)

    assert window("Mel") == [(m["type"], m["data"]["content"]) for m in messages]
    lines = dialogue_lines(client)
    assert [line.split(" | ", 1)[1] for line in lines] == [
        strip_bracketed(m["data"]["content"]).strip() for m in messages
    ]
    assert RawMessage.objects.filter(character__name="Mel").count() == 60
    assert llm_server.requests  # the provider really was asked, and really failed
