"""The kernel's job mechanism: back-off, dead letter, waiting for a provider, leases, tokens, self-heal."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import django_q.brokers
import django_q.conf
import django_q.tasks
import pytest
from django.utils import timezone

from nekomem.journal import broker, jobs, work
from nekomem.journal.jobs import (
    JobKind,
    job_claim,
    job_create,
    job_fail,
    job_retry,
    job_run,
    job_start,
    job_succeed,
    job_supersede,
    register_job_kind,
    unregister_job_kind,
)
from nekomem.journal.models import Job
from nekomem.journal.sweep import work_sweep
from nekomem.journal.work import JOB_MAX_ATTEMPTS
from nekomem.llm import chat
from tests.characters.factories import CharacterFactory
from tests.journal.factories import make_job
from tests.support.llm_server import error, text

pytestmark = pytest.mark.django_db

KIND = "test.job"


class Script:
    """What the test kind's handler does: fail ``fail`` more times, then return ``outcome``."""

    def __init__(self) -> None:
        self.fail = 0
        self.runs: list[int] = []
        self.dead: list[int] = []

    def handle(self, job: Job) -> str:
        self.runs.append(job.pk)
        if self.fail > 0:
            self.fail -= 1
            raise RuntimeError("upstream down")
        return "ran"


@pytest.fixture
def script() -> Iterator[Script]:
    script = Script()
    register_job_kind(KIND, handler=script.handle, on_dead=lambda job: script.dead.append(job.pk))
    yield script
    unregister_job_kind(KIND)


def new_job() -> Job:
    character = CharacterFactory.create()
    job, created = job_create(character_id=character.pk, kind=KIND, payload={"id": 1}, enqueue=False)
    assert created
    return job


def fresh(job: Job) -> Job:
    return Job.objects.get(pk=job.pk)


def test_backoff_doubles_from_one_minute():
    assert [work.backoff_delay(n) for n in range(1, 5)] == [timedelta(minutes=m) for m in (1, 2, 4, 8)]


def test_each_failure_backs_off_and_the_fifth_dead_letters_once(script):
    script.fail = 99
    job = new_job()
    for attempt in range(1, JOB_MAX_ATTEMPTS):
        before = timezone.now()
        assert job_run(job_id=job.pk) == "waiting"
        job = fresh(job)
        assert (job.status, job.waiting_reason, job.attempts) == ("waiting", "backoff", attempt)
        assert job.next_attempt_at is not None
        waited = job.next_attempt_at - before
        assert work.backoff_delay(attempt) <= waited < work.backoff_delay(attempt) + timedelta(seconds=5)
        assert job.last_error == "RuntimeError: upstream down"
        # Not due before its back-off ends; due after.
        assert work_sweep(now=job.next_attempt_at - timedelta(seconds=1)).jobs == 0
    assert work_sweep(now=job.next_attempt_at).jobs == 1  # sync cluster: the fifth run happens here
    job = fresh(job)
    assert (job.status, job.attempts, job.finished_at is not None) == ("dead", 5, True)
    assert script.dead == [job.pk]
    assert work_sweep(now=timezone.now() + timedelta(days=1)).jobs == 0  # dead work stays put


def test_a_retry_that_succeeds_clears_the_error(script):
    script.fail = 1
    job = new_job()
    assert job_run(job_id=job.pk) == "waiting"
    assert job_run(job_id=job.pk) == "done"
    job = fresh(job)
    assert (job.status, job.outcome, job.last_error, job.attempts) == ("done", "ran", "", 1)


def test_one_active_job_per_character_kind_and_key(script):
    character = CharacterFactory.create()
    first, created = job_create(character_id=character.pk, kind=KIND, enqueue=False)
    again, created_again = job_create(character_id=character.pk, kind=KIND, enqueue=False)
    other, created_other = job_create(character_id=character.pk, kind=KIND, key="b", enqueue=False)
    assert (created, created_again, created_other) == (True, False, True)
    assert again.pk == first.pk != other.pk
    with pytest.raises(ValueError):
        job_create(character_id=character.pk, kind="nobody.registered.this", enqueue=False)


def test_a_committed_job_is_enqueued_and_runs(script, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job, _ = job_create(character_id=CharacterFactory.create().pk, kind=KIND)
        assert script.runs == []  # nothing runs before the commit
    assert script.runs == [job.pk]
    assert fresh(job).status == "done"


def test_enqueued_jobs_go_through_one_broker_per_process(monkeypatch):
    """``async_task`` without a broker builds one per call: on Redis a new client and TCP connection
    for every job a chat turn requests. Counted at django-q2's own factory, not replaced; the tasks
    really go to the broker of this run (Redis or the ORM queue), not run inline."""
    built = []

    def counted(*args, **kwargs):
        built.append(real(*args, **kwargs))
        return built[-1]

    real = django_q.brokers.get_broker
    monkeypatch.setattr(django_q.brokers, "get_broker", counted)
    monkeypatch.setattr(django_q.tasks, "get_broker", counted)
    monkeypatch.setattr(django_q.conf.Conf, "SYNC", False)
    monkeypatch.setattr(broker, "_broker", None)
    shared = broker.process_broker()
    shared.purge_queue()
    try:
        for job_id in (11, 12, 13):
            jobs.job_enqueue(job_id=job_id)
        assert len(built) == 1
        assert shared.queue_size() == 3
    finally:
        shared.purge_queue()


def test_waiting_for_a_provider_costs_nothing_then_runs_once_one_is_configured(llm_server, settings):
    def ask(job: Job) -> str:
        return chat(tier="summary", messages=[{"role": "user", "content": "ping"}], timeout=5)

    register_job_kind("test.llm", handler=ask, tier="summary")
    try:
        configured = settings.LLM_TIERS
        settings.LLM_TIERS = {}
        job, _ = job_create(character_id=CharacterFactory.create().pk, kind="test.llm", enqueue=False)
        assert job_run(job_id=job.pk) == "waiting"
        job = fresh(job)
        assert (job.status, job.waiting_reason, job.attempts, job.next_attempt_at) == (
            "waiting",
            "no_provider:summary",
            0,
            None,
        )
        assert work_sweep(now=timezone.now() + timedelta(days=1)).jobs == 0
        assert llm_server.requests == []

        settings.LLM_TIERS = configured
        llm_server.script(text("pong"))
        assert work_sweep().jobs == 1
        job = fresh(job)
        assert (job.status, job.outcome, job.attempts, job.waiting_reason) == ("done", "pong", 0, "")
        assert len(llm_server.requests) == 1
    finally:
        unregister_job_kind("test.llm")


def test_a_live_lease_keeps_others_out_and_an_expired_one_lets_the_next_claim_in(script):
    job = new_job()
    first = job_claim(job_id=job.pk)
    assert first is not None and first.status == "running" and first.lease_until is not None
    assert job_claim(job_id=job.pk) is None
    assert job_run(job_id=job.pk) == "busy"
    Job.objects.filter(pk=job.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    second = job_claim(job_id=job.pk)
    assert second is not None and second.run_token != first.run_token


def test_a_stale_run_cannot_overwrite_the_run_that_took_over(script):
    job = new_job()
    stale = job_claim(job_id=job.pk)
    assert stale is not None
    Job.objects.filter(pk=job.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    current = job_claim(job_id=job.pk)
    assert current is not None

    assert job_succeed(job=stale, outcome="stale") is False
    assert job_fail(job=stale, error=RuntimeError("stale")) is None
    held = fresh(job)
    assert (held.status, held.run_token, held.attempts, held.outcome) == ("running", current.run_token, 0, "")
    assert job_succeed(job=current, outcome="current") is True
    assert (fresh(job).status, fresh(job).outcome) == ("done", "current")


def test_the_sweep_counts_an_expired_lease_as_an_attempt_and_runs_the_job_again(script):
    job = new_job()
    assert job_claim(job_id=job.pk) is not None  # a worker took it, then vanished
    later = timezone.now() + work.DEFAULT_LEASE + timedelta(seconds=1)
    assert work_sweep(now=later).jobs == 1
    job = fresh(job)
    assert (job.status, job.attempts, job.outcome) == ("done", 1, "ran")
    assert script.runs == [job.pk]


def test_a_job_whose_workers_keep_vanishing_is_dead_lettered_by_the_sweep(script):
    job = new_job()
    Job.objects.filter(pk=job.pk).update(
        status="running", attempts=JOB_MAX_ATTEMPTS - 1, lease_until=timezone.now() - timedelta(seconds=1)
    )
    assert work_sweep().jobs == 0
    job = fresh(job)
    assert (job.status, job.attempts) == ("dead", JOB_MAX_ATTEMPTS)
    assert "LeaseExpired" in job.last_error
    assert script.dead == [job.pk]


def test_retry_gives_a_dead_job_fresh_attempts(script, django_capture_on_commit_callbacks):
    job = make_job(kind=KIND, status="dead", attempts=5, last_error="RuntimeError: upstream down")
    assert job_retry(job_id=new_job().pk) is False  # only dead jobs are retried
    with django_capture_on_commit_callbacks(execute=True):
        assert job_retry(job_id=job.pk) is True
    job = fresh(job)
    assert (job.status, job.outcome, job.attempts) == ("done", "ran", 0)


def test_dead_self_healing_work_gets_one_probe_every_five_hours(script):
    register_job_kind(KIND, handler=script.handle, self_heal=True)
    script.fail = 99
    job = new_job()
    for _ in range(JOB_MAX_ATTEMPTS):
        job_run(job_id=job.pk)
    died = fresh(job).finished_at
    assert died is not None and fresh(job).status == "dead"
    runs = len(script.runs)

    assert work_sweep(now=died + timedelta(hours=4, minutes=59)).probed == 0
    probe = died + timedelta(hours=5)
    report = work_sweep(now=probe)
    assert (report.probed, len(script.runs)) == (1, runs + 1)  # one run, and it failed again
    job = fresh(job)
    assert (job.status, job.attempts, job.probed_at) == ("dead", JOB_MAX_ATTEMPTS, probe)

    script.fail = 0
    assert work_sweep(now=probe + timedelta(hours=4)).probed == 0
    assert work_sweep(now=probe + timedelta(hours=5)).probed == 1
    assert (fresh(job).status, fresh(job).outcome) == ("done", "ran")


def test_dead_work_of_kinds_without_self_heal_is_never_probed(script):
    job = make_job(kind=KIND, status="dead", attempts=5, finished_at=timezone.now() - timedelta(days=2))
    assert work_sweep(now=timezone.now() + timedelta(days=30)).probed == 0
    assert fresh(job).status == "dead"


def test_a_kind_is_registered_once_by_name():
    spec = register_job_kind("test.registry", handler="tests.journal.test_jobs.fresh", tier="summary")
    try:
        assert isinstance(spec, JobKind) and jobs.job_kind("test.registry") == spec
        assert spec.resolve_handler() is fresh
    finally:
        unregister_job_kind("test.registry")
    assert jobs.job_kind("test.registry") is None


def test_provider_errors_count_as_attempts(llm_server):
    def ask(job: Job) -> str:
        return chat(tier="summary", messages=[{"role": "user", "content": "ping"}], timeout=5)

    register_job_kind("test.llm", handler=ask, tier="summary")
    try:
        llm_server.fallback = lambda body: error(500)
        llm_server.allow_unexpected = True
        job, _ = job_create(character_id=CharacterFactory.create().pk, kind="test.llm", enqueue=False)
        assert job_run(job_id=job.pk) == "waiting"
        job = fresh(job)
        assert (job.waiting_reason, job.attempts) == ("backoff", 1) and "HTTP 500" in job.last_error
    finally:
        unregister_job_kind("test.llm")


def test_a_kind_run_by_its_loop_backs_off_on_the_loop_clock_and_is_never_enqueued():
    register_job_kind("test.loop", handler=None, tier="summary")
    try:
        character_id = CharacterFactory.create().pk
        at = timezone.now() - timedelta(days=3)  # the loop's own clock
        job, why = job_start(character_id=character_id, kind="test.loop", now=at)
        assert job is not None and why == "" and job.status == "running"
        assert job_fail(job=job, error=RuntimeError("window failed"), now=at) == "waiting"
        assert fresh(job).next_attempt_at == at + work.backoff_delay(1)
        assert job_start(character_id=character_id, kind="test.loop", now=at) == (None, "backoff")
        assert work_sweep(now=timezone.now() + timedelta(days=1)).jobs == 0  # the loop runs it, not a task
        again, _ = job_start(character_id=character_id, kind="test.loop", now=at + timedelta(minutes=1))
        assert again is not None and again.pk == job.pk and again.attempts == 1

        Job.objects.filter(pk=job.pk).update(status="dead", run_token=None)
        assert job_retry(job_id=job.pk) is True
        assert job_run(job_id=job.pk) == "scheduled"  # a stray task leaves it to the loop
        picked, _ = job_start(character_id=character_id, kind="test.loop")
        assert picked is not None and picked.pk == job.pk and picked.attempts == 0
    finally:
        unregister_job_kind("test.loop")


def test_keyed_loop_work_stays_dead_until_its_probe_and_new_input_supersedes_the_old_key():
    register_job_kind("test.keyed", handler=None, tier="summary", self_heal=True)
    try:
        character_id = CharacterFactory.create().pk
        job, _ = job_start(character_id=character_id, kind="test.keyed", key="input-1", stop_when_dead=True)
        assert job is not None
        Job.objects.filter(pk=job.pk).update(status="dead", run_token=None, finished_at=timezone.now())
        assert job_start(
            character_id=character_id, kind="test.keyed", key="input-1", stop_when_dead=True
        ) == (
            None,
            "dead",
        )
        # Without stop_when_dead (a loop that moves past dead work) a fresh job starts.
        fresh_run, _ = job_start(character_id=character_id, kind="test.keyed", key="input-1")
        assert fresh_run is not None and fresh_run.pk != job.pk
        Job.objects.filter(pk=fresh_run.pk).update(status="waiting", waiting_reason="backoff", run_token=None)

        assert job_supersede(character_id=character_id, kind="test.keyed", key="input-2") == 2
        assert set(Job.objects.filter(kind="test.keyed").values_list("status", "outcome")) == {
            ("done", "superseded")
        }
        newer, _ = job_start(character_id=character_id, kind="test.keyed", key="input-2", stop_when_dead=True)
        assert newer is not None and newer.key == "input-2"
    finally:
        unregister_job_kind("test.keyed")


def test_a_kind_with_its_own_back_off_waits_that_long_after_each_failure():
    register_job_kind("test.slow", handler=None, tier="summary", backoff=lambda _n: timedelta(minutes=30))
    try:
        character_id = CharacterFactory.create().pk
        at = timezone.now()
        job, _ = job_start(character_id=character_id, kind="test.slow", now=at)
        assert job is not None
        assert job_fail(job=job, error=RuntimeError("no answer"), now=at) == "waiting"
        assert fresh(job).next_attempt_at == at + timedelta(minutes=30)
        assert job_start(character_id=character_id, kind="test.slow", now=at + timedelta(minutes=29)) == (
            None,
            "backoff",
        )
    finally:
        unregister_job_kind("test.slow")
