"""Helpers shared by the compression and review tests: routes, windows and LLM replies."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.db import connection

from nekomem.journal.jobs import job_run
from nekomem.journal.models import Job
from recent.models import RecentMessage
from recent.prompts import DIALOGUE_END, DIALOGUE_START
from tests.support.llm_server import Reply, json_content


def post(client: Any, route: str, name: str, messages: list[dict], language: str | None = "en") -> Any:
    body: dict[str, Any] = {"input_history": json.dumps(messages, ensure_ascii=False)}
    if language:
        body["language"] = language
    return client.post(f"/{route}/{name}", data=json.dumps(body), content_type="application/json")


def run_job(job: Job) -> tuple[str, str]:
    """Run a job once through the kernel; returns its status and what the run did."""
    status = job_run(job_id=job.pk)
    job.refresh_from_db()
    return status, job.outcome


def window(name: str) -> list[tuple[str, str]]:
    rows = RecentMessage.objects.filter(character__name=name).order_by("position")
    return [(row.type, row.data["content"]) for row in rows]


def contents(messages: list[dict]) -> list[str]:
    return [m["data"]["content"] for m in messages]


def user_text(body: dict) -> str:
    return "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")


def system_text(body: dict) -> str:
    return "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")


def dialogue_of(body: dict) -> str:
    """The framed dialogue a summarise or review request carries."""
    text = user_text(body)
    start = text.index(DIALOGUE_START) + len(DIALOGUE_START) + 1
    return text[start : text.index(DIALOGUE_END) - 1]


def is_tier(body: dict, tier: str) -> bool:
    return body.get("model") == f"test-{tier}-model"


def summary(text: str) -> Reply:
    return json_content({"summary": text})


def unchanged_review(body: dict) -> Reply:
    """A review that finds nothing to fix: the dialogue it was given, verbatim."""
    return json_content(
        {"explanation": "nothing to fix", "corrected_dialogue": json.loads(dialogue_of(body))}
    )


def dispatcher(summary_text: str = "they talked") -> Callable[[dict], Reply]:
    """Answer summary requests with a memo and reviews with no change (for long scripted runs)."""

    def answer(body: dict) -> Reply:
        return unchanged_review(body) if is_tier(body, "correction") else summary(summary_text)

    return answer


def in_own_connection(work: Callable[[], Any]) -> Any:
    """Run DB work from an LLM-server handler thread, closing that thread's connection afterwards
    (PostgreSQL refuses to drop the test database while a connection is left open)."""
    try:
        return work()
    finally:
        connection.close()
