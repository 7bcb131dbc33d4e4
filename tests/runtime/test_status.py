"""``GET /api/v1/status/`` and the front door's status panel: each part reports what is true now."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from unittest.mock import ANY

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from facts.models import Fact
from facts.services import FactDraft, facts_persist
from nekomem import embeddings
from nekomem.embeddings.profiles import get_profile
from nekomem.runtime import startup, state
from nekomem.runtime.status import (
    VectorCoverage,
    llm_startup_log,
    register_vector_counter,
    unregister_vector_counter,
)
from recall import index_cache
from tests.characters.factories import CharacterFactory
from tests.facts.factories import make_fact
from tests.journal.factories import JobFactory, OutboxOpFactory

pytestmark = pytest.mark.django_db

SECRET = "sk-status-SECRET-0000"


def status(client: Client) -> dict:
    answer = client.get("/api/v1/status/")
    assert answer.status_code == 200, answer.content
    return answer.json()


@pytest.fixture
def no_provider(settings) -> None:
    settings.LLM_TIERS = {}


@pytest.fixture
def summary_only(settings) -> None:
    settings.LLM_TIERS = {
        "summary": {"base_url": "http://127.0.0.1:9/v1", "api_key": SECRET, "model": "cheap-model"},
        # Its own base URL without a model: it does not fall back to summary, and is not configured.
        "emotion": {"base_url": "http://127.0.0.1:9/v1", "api_key": SECRET, "model": ""},
    }


@pytest.fixture
def model_id() -> Iterator[str]:
    # A fresh model holder (INIT, never loaded): whatever an earlier test loaded or disabled is forgotten.
    embeddings.reset_for_tests()
    yield get_profile(embeddings.configured_profile()).model_id
    embeddings.reset_for_tests()


@pytest.mark.usefixtures("summary_only")
def test_each_tier_is_reported_configured_or_not_and_the_key_never_appears(client: Client) -> None:
    answer = client.get("/api/v1/status/")
    assert SECRET not in answer.content.decode()
    tiers = {t["tier"]: t for t in answer.json()["llm_tiers"]}
    assert tiers["summary"] == {
        "tier": "summary",
        "configured": True,
        "model": "cheap-model",
        "provider_tier": "summary",
    }
    assert tiers["correction"] == {
        "tier": "correction",
        "configured": True,
        "model": "cheap-model",
        "provider_tier": "summary",
    }
    assert tiers["emotion"]["configured"] is False and tiers["emotion"]["provider_tier"] == "emotion"
    body = answer.json()
    assert body["llm_work_waits"] is True and body["tiers_without_provider"] == ["emotion"]


@pytest.mark.usefixtures("no_provider")
def test_with_no_provider_every_tier_waits(client: Client) -> None:
    body = status(client)
    assert [t["configured"] for t in body["llm_tiers"]] == [False, False, False]
    assert body["tiers_without_provider"] == ["summary", "correction", "emotion"]


def test_waiting_jobs_are_grouped_by_reason_and_dead_ones_counted(client: Client) -> None:
    first, second = CharacterFactory.create(name="甲"), CharacterFactory.create(name="乙")
    for character, kind in (
        (first, "recent.compress"),
        (second, "recent.compress"),
        (first, "facts.extract"),
    ):
        JobFactory.create(
            character=character, kind=kind, status="waiting", waiting_reason="no_provider:summary"
        )
    JobFactory.create(character=first, kind="recent.review", status="waiting", waiting_reason="backoff")
    for kind in ("a.one", "a.two"):
        JobFactory.create(character=second, kind=kind, status="dead", last_error="RuntimeError: x")
    JobFactory.create(character=second, kind="a.three", status="running")
    JobFactory.create(character=second, kind="a.four", status="pending")
    JobFactory.create(character=second, kind="a.five", status="done")

    jobs = status(client)["jobs"]
    assert (jobs["pending"], jobs["running"], jobs["waiting"], jobs["dead"]) == (1, 1, 4, 2)
    assert jobs["unfinished"] == 6
    assert jobs["waiting_by_reason"] == [
        {
            "reason": "no_provider:summary",
            "description": "没有 summary 层的 LLM 提供方 No provider for the summary tier",
            "count": 3,
            "kinds": ["facts.extract", "recent.compress"],
        },
        {
            "reason": "backoff",
            "description": "失败后等待重试 Backing off after a failure",
            "count": 1,
            "kinds": ["recent.review"],
        },
    ]


def test_outbox_ops_pending_waiting_and_dead_are_counted(client: Client) -> None:
    character = CharacterFactory.create()
    OutboxOpFactory.create_batch(2, character=character, status="pending")
    OutboxOpFactory.create(character=character, status="waiting", waiting_reason="no_provider:summary")
    OutboxOpFactory.create(character=character, status="dead", last_error="ValueError: y")
    OutboxOpFactory.create_batch(3, character=character, status="done")

    outbox = status(client)["outbox"]
    assert (outbox["pending"], outbox["waiting"], outbox["dead"], outbox["unfinished"]) == (2, 1, 1, 3)
    assert [(r["reason"], r["count"], r["kinds"]) for r in outbox["waiting_by_reason"]] == [
        ("no_provider:summary", 1, ["test_op"])
    ]


def test_embeddings_are_on_backfilling_or_off_with_counts(client: Client, settings, model_id: str) -> None:
    settings.STATUS_VECTOR_COUNTS_TTL = 0  # every call counts afresh
    character = CharacterFactory.create()
    make_fact(character=character, embedding="AAAA", embedding_model_id=model_id)
    make_fact(character=character, embedding="AAAA", embedding_model_id=model_id)
    assert status(client)["embeddings"] | {"model_state": "?"} == {
        "state": "on",
        "model_id": model_id,
        "model_state": "?",
        "reason": "",
        "with_vectors": 2,
        "without_vectors": 0,
        "counted_at": ANY,
    }

    make_fact(character=character)  # no vector yet
    make_fact(character=character, embedding="AAAA", embedding_model_id="an-older-model")
    vectors = status(client)["embeddings"]
    assert (vectors["state"], vectors["with_vectors"], vectors["without_vectors"]) == ("backfilling", 2, 2)

    settings.EMBEDDINGS_ENABLED = False
    vectors = status(client)["embeddings"]
    assert (vectors["state"], vectors["reason"]) == ("off", "disabled by NEKOMEM_EMBEDDINGS")
    assert vectors["without_vectors"] == 2  # what would need a vector once they are turned on


def test_the_vector_pools_are_counted_once_per_ttl_not_on_every_call(
    client: Client, settings, model_id: str
) -> None:
    settings.STATUS_VECTOR_COUNTS_TTL = 60
    character = CharacterFactory.create()
    make_fact(character=character, embedding="AAAA", embedding_model_id=model_id)
    first = status(client)["embeddings"]
    make_fact(character=character)  # not seen until the count is taken again

    def fact_queries() -> tuple[dict, list[str]]:
        with CaptureQueriesContext(connection) as queries:
            vectors = status(client)["embeddings"]
        return vectors, [q["sql"] for q in queries.captured_queries if Fact._meta.db_table in q["sql"]]

    again, read_facts = fact_queries()
    assert read_facts == []
    assert again == first and (first["with_vectors"], first["without_vectors"]) == (1, 0)
    assert first["counted_at"] is not None

    settings.STATUS_VECTOR_COUNTS_TTL = 0  # the count is stale now
    fresh, read_facts = fact_queries()
    assert len(read_facts) >= 1 and "COUNT" in read_facts[0].upper()
    assert (fresh["with_vectors"], fresh["without_vectors"]) == (1, 1)
    assert fresh["counted_at"] > first["counted_at"]


@pytest.mark.usefixtures("model_id")
def test_a_layer_registers_its_own_vector_counter(client: Client, settings) -> None:
    settings.STATUS_VECTOR_COUNTS_TTL = 0
    register_vector_counter("test-pool", lambda model: VectorCoverage(with_vectors=5, without_vectors=7))
    try:
        vectors = status(client)["embeddings"]
    finally:
        unregister_vector_counter("test-pool")
    assert (vectors["state"], vectors["with_vectors"], vectors["without_vectors"]) == ("backfilling", 5, 7)
    assert status(client)["embeddings"]["without_vectors"] == 0


def test_the_answering_process_reports_what_its_recall_indexes_hold(client: Client) -> None:
    index_cache.clear()

    def held() -> tuple[int, dict]:
        process = status(client)["process"]
        return process["pid"], next(c for c in process["caches"] if c["name"] == "recall_indexes")

    pid, empty = held()
    assert pid == os.getpid() and (empty["entries"], empty["rows"], empty["bytes"]) == (0, 0, 0)
    character = CharacterFactory.create(name="Mel")
    for text in ("Emily went to Green Meadow Park", "Emily plays the piano"):
        make_fact(character=character, text=text)

    def ask() -> int:
        body = json.dumps({"query": "piano"})
        return client.post("/query_memory/Mel", data=body, content_type="application/json").status_code

    assert ask() == 200
    _, one = held()
    assert one["entries"] == 1 and one["rows"] >= 2 and one["bytes"] > 0
    names = ["Anna", "Boris", "Chen", "Dana", "Eli", "Fatima", "Goro", "Hana", "Ivan", "Jun"]
    pets = ["parrot", "tortoise", "ferret", "goldfish", "hamster", "iguana", "rabbit", "pony", "snail", "owl"]
    cities = ["Lisbon", "Osaka", "Quito", "Tromsø", "Nairobi", "Hobart", "Tallinn", "Cusco", "Busan", "Perth"]
    drafts = [
        FactDraft(text=f"{n} adopted a {p} in {c}") for n, p, c in zip(names, pets, cities, strict=True)
    ]
    facts_persist(character_id=character.pk, drafts=drafts)
    added = Fact.objects.filter(character=character).count() - 2
    assert ask() == 200
    _, grown = held()
    assert added >= 8
    assert grown["entries"] == 1 and grown["rows"] == one["rows"] + added and grown["bytes"] > one["bytes"]


def test_a_blocked_storage_is_reported_while_other_routes_answer_409(client: Client) -> None:
    assert status(client)["storage"] == {"blocked": False, "reason": ""}
    state.storage_block(reason="restore_in_progress")
    try:
        assert client.get("/api/v1/characters/").status_code == 409
        assert status(client)["storage"] == {"blocked": True, "reason": "restore_in_progress"}
    finally:
        startup.storage_release()
    assert status(client)["storage"]["blocked"] is False


def test_while_starting_the_counts_are_unknown_not_zero(client: Client) -> None:
    JobFactory.create(status="dead")
    state.set_initializing()
    try:
        body = status(client)
    finally:
        assert startup.startup_run()
    assert body["storage"] == {"blocked": True, "reason": "runtime_initializing"}
    assert body["jobs"] is None and body["outbox"] is None
    assert body["embeddings"]["with_vectors"] is None
    assert status(client)["jobs"]["dead"] == 1


def test_the_openapi_schema_describes_the_status(client: Client) -> None:
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/v1/status/"]["get"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Status"
    }
    properties = schema["components"]["schemas"]["Status"]["properties"]
    assert {"llm_tiers", "jobs", "outbox", "embeddings", "storage", "process"} <= set(properties)


@pytest.mark.usefixtures("no_provider")
def test_the_front_door_shows_the_same_status(client: Client) -> None:
    character = CharacterFactory.create(name="小天")
    JobFactory.create(character=character, status="dead")
    JobFactory.create(character=character, status="waiting", waiting_reason="no_provider:summary")
    page = client.get("/").content.decode()
    assert "<th>任务 Jobs</th>" in page and "<td>2</td>" in page  # the character's jobs not done
    assert 'data-testid="status-panel"' in page
    assert "LLM work waits: no provider for the summary, correction, emotion tier(s)" in page
    assert "失败 dead 1" in page
    assert "没有 summary 层的 LLM 提供方 No provider for the summary tier: 1" in page


def test_the_startup_line_says_that_llm_work_will_wait(caplog, settings) -> None:
    settings.LLM_TIERS = {}
    with caplog.at_level(logging.INFO, logger="nekomem.runtime.status"):
        llm_startup_log()
    assert len(caplog.records) == 1
    assert "no provider configured for any tier (summary, correction, emotion)" in caplog.text
    assert "LLM work (compression, fact extraction, reviews, reflections) will wait" in caplog.text


@pytest.mark.usefixtures("summary_only")
def test_the_startup_line_names_the_configured_tiers(caplog) -> None:
    with caplog.at_level(logging.INFO, logger="nekomem.runtime.status"):
        llm_startup_log()
    assert [r.getMessage() for r in caplog.records] == [
        "LLM: tiers configured: summary (model cheap-model), correction (summary's); "
        "work of tiers without a provider will wait: emotion"
    ]
    assert SECRET not in caplog.text
