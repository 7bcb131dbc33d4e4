"""The 60 000-token hard cap of the recent window (reference §3.1.4).

With a provider, the cap is the last resort once compression dead-lettered (the summariser may still
succeed until then). Without one, compression cannot run at all, so the cap holds the window (and
every ``/new_dialog`` render) while the job waits for a provider; the raw log keeps every turn.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.journal.models import Job
from nekomem.journal.sweep import work_sweep
from nekomem.language.counting import count_tokens
from nekomem.runtime.switches import RECENT_AUTO_REVIEW, switch_set
from recent.compression import HARD_CAP_TOKENS
from recent.jobs import COMPRESS_JOB
from recent.models import RawMessage
from recent.prompts import MEMO_PREFIX
from recent.services import idle_maintenance_run
from tests.recent.scripting import summary, window
from tests.support.dataset import english_messages, turns
from tests.support.llm_server import error

pytestmark = pytest.mark.django_db

EN_MEMO = MEMO_PREFIX["en"]


@pytest.fixture(autouse=True)
def _review_off(db):
    # Reviews need a provider of their own tier; these tests are about the summary tier only.
    switch_set(name=RECENT_AUTO_REVIEW, enabled=False)


@pytest.fixture
def no_provider(settings):
    settings.LLM_TIERS = {}


def big_turns(count: int, *, offset: int = 0) -> list[dict[str, Any]]:
    """``count`` long messages (fixture text joined into blocks), alternating human and ai, that pass
    the hard cap together once there are about 40 of them."""
    pool = [t["text"] for name in ("memorybank-cn", "memorybank-en") for t in turns(name)] * 4
    blocks = [" ".join(pool[i::40]) for i in range(40)]
    return [
        {"type": "human" if i % 2 == 0 else "ai", "data": {"content": f"{blocks[i % 40]} #{i}"}}
        for i in range(offset, offset + count)
    ]


def window_tokens(name: str) -> int:
    return sum(count_tokens(content) for _, content in window(name))


def as_window(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(m["type"], m["data"]["content"]) for m in messages]


def test_without_a_provider_the_window_is_capped_while_compression_waits(client, no_provider, run_commits):
    memo = {"type": "system", "data": {"content": EN_MEMO + "kept memo"}}
    messages = [memo, *big_turns(40)]
    assert sum(count_tokens(m["data"]["content"]) for m in messages) > HARD_CAP_TOKENS

    assert run_commits(client, "process", "Mel", messages).json() == {"status": "processed"}

    job = Job.objects.get(kind=COMPRESS_JOB)
    assert (job.status, job.waiting_reason, job.attempts) == ("waiting", "no_provider:summary", 0)
    capped = window("Mel")
    assert capped[0] == ("system", EN_MEMO + "kept memo")
    assert capped[-10:] == as_window(messages[-10:])
    assert 11 <= len(capped) < len(messages)
    assert window_tokens("Mel") <= HARD_CAP_TOKENS
    # Nothing is lost: the raw log still has every message of the turn.
    assert RawMessage.objects.filter(character__name="Mel").count() == len(messages)


def test_turns_that_arrive_while_the_job_waits_are_capped_too(client, no_provider, run_commits):
    run_commits(client, "process", "Mel", english_messages(25))
    job = Job.objects.get(kind=COMPRESS_JOB)
    assert (job.status, job.waiting_reason) == ("waiting", "no_provider:summary")
    assert len(window("Mel")) == 25  # under the cap: nothing is dropped

    # /cache never compresses; the /settle that ends the session finds the job waiting and caps.
    messages = big_turns(40)
    run_commits(client, "cache", "Mel", messages)
    assert window_tokens("Mel") > HARD_CAP_TOKENS
    run_commits(client, "settle", "Mel", [])
    assert window_tokens("Mel") <= HARD_CAP_TOKENS
    assert window("Mel")[-10:] == as_window(messages[-10:])

    # /renew (inline compression, which cannot run) and idle maintenance keep it so.
    more = big_turns(30, offset=40)
    assert run_commits(client, "renew", "Mel", more).json()["compression_reason"] == "no_provider:summary"
    assert window_tokens("Mel") <= HARD_CAP_TOKENS
    assert window("Mel")[-10:] == as_window(more[-10:])

    latest = big_turns(30, offset=70)
    run_commits(client, "cache", "Mel", latest)
    Character.objects.filter(name="Mel").update(last_activity_at=timezone.now() - timedelta(minutes=5))
    assert idle_maintenance_run() == 1
    assert window_tokens("Mel") <= HARD_CAP_TOKENS
    assert window("Mel")[-10:] == as_window(latest[-10:])

    # One job waited through all of it, without spending an attempt.
    job = Job.objects.get(kind=COMPRESS_JOB)
    assert (job.status, job.waiting_reason, job.attempts) == ("waiting", "no_provider:summary", 0)
    assert RawMessage.objects.filter(character__name="Mel").count() == 25 + 40 + 30 + 30


def test_with_a_provider_the_cap_still_waits_for_the_dead_letter(client, llm_server, run_commits):
    llm_server.fallback = lambda _body: error(500, message="upstream down")
    llm_server.allow_unexpected = True
    messages = big_turns(41)

    run_commits(client, "process", "Mel", messages)
    job = Job.objects.get(kind=COMPRESS_JOB)
    assert (job.status, job.waiting_reason, job.attempts) == ("waiting", "backoff", 1)
    # The summariser may still succeed on a retry: no request drops anything meanwhile.
    run_commits(client, "settle", "Mel", [])
    Character.objects.filter(name="Mel").update(last_activity_at=timezone.now() - timedelta(minutes=5))
    idle_maintenance_run()
    assert window("Mel") == as_window(messages)

    for _ in range(4):
        job.refresh_from_db()
        work_sweep(now=job.next_attempt_at)
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("dead", 5)
    assert window_tokens("Mel") <= HARD_CAP_TOKENS
    assert window("Mel")[-10:] == as_window(messages[-10:])


def test_a_provider_configured_meanwhile_summarises_instead_of_capping(
    client, llm_server, run_commits, settings
):
    configured = settings.LLM_TIERS
    settings.LLM_TIERS = {}
    run_commits(client, "process", "Mel", english_messages(25))
    assert Job.objects.get(kind=COMPRESS_JOB).waiting_reason == "no_provider:summary"

    # The provider is back before the sweep picked the job up: a request must not cap the window,
    # the summariser will fold it into a memo.
    settings.LLM_TIERS = configured
    messages = big_turns(40)
    run_commits(client, "cache", "Mel", messages)
    run_commits(client, "settle", "Mel", [])
    assert len(window("Mel")) == 25 + 40

    llm_server.fallback = lambda _body: summary("they talked at length")
    assert work_sweep().jobs == 1
    assert window("Mel") == [("system", EN_MEMO + "they talked at length"), *as_window(messages[-9:])]
