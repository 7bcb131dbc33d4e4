"""Logs at INFO and above carry metadata only: no memory text, no query, no key.

Every wire route and API read is called, each turn's background op runs (django-q2 inline), and
every scheduled job runs once, against a real LLM server on loopback; then no log record of level
INFO or higher may contain the conversation's text, the recall query, the LLM key or the bearer
secret.
"""

from __future__ import annotations

import json
import logging
from importlib import import_module

import pytest
from django.conf import settings

from nekomem.runtime.schedules import registered_schedules
from tests.support.llm_server import TEST_API_KEY

pytestmark = pytest.mark.django_db

NAME = "小天"
SECRET_TEXT = "主人的银行卡密码是四八一五九二"
SECRET_REPLY = "我会替主人保密四八一五九二"
SECRET_QUERY = "银行卡密码提示词七七三"


def turn_body(*pairs: tuple[str, str]) -> str:
    messages = [{"type": kind, "data": {"content": text}} for kind, text in pairs]
    return json.dumps({"input_history": json.dumps(messages, ensure_ascii=False), "language": "zh"})


def call(function_path: str) -> None:
    module, name = function_path.rsplit(".", 1)
    getattr(import_module(module), name)()


def leaked(records: list[logging.LogRecord]) -> list[str]:
    secrets = (SECRET_TEXT, SECRET_REPLY, SECRET_QUERY, TEST_API_KEY, settings.NEKOMEM_API_TOKEN, "四八一五")
    found: list[str] = []
    for record in records:
        if record.levelno < logging.INFO:
            continue
        text = record.getMessage() + (
            logging.Formatter().formatException(record.exc_info) if record.exc_info else ""
        )
        found.extend(f"{record.levelname} {record.name}: {text[:200]}" for s in secrets if s in text)
    return found


def test_info_logs_of_every_route_and_job_carry_no_memory_text_query_or_key(
    client, internal_client, llm_server, caplog, django_capture_on_commit_callbacks
):
    # Whatever a job asks, it gets an answer that echoes the secret, so a job that logs what the
    # model said would leak it too.
    llm_server.fallback = lambda request: json.dumps({"summary": SECRET_TEXT, "facts": [], "verdict": "ok"})
    llm_server.allow_unexpected = True
    caplog.set_level(logging.DEBUG)
    client.post(
        "/api/v1/powerful_memory_config", data=json.dumps({"enabled": False}), content_type="application/json"
    )
    body = turn_body(("human", SECRET_TEXT), ("ai", SECRET_REPLY))
    with django_capture_on_commit_callbacks(execute=True):
        for route in ("cache", "process", "renew", "settle"):
            assert (
                client.post(f"/{route}/{NAME}", data=body, content_type="application/json").status_code == 200
            )
        client.post(f"/cache/{NAME}", data=b"{not json", content_type="application/json")
        client.post(
            f"/cache/{NAME}", data=json.dumps({"input_history": "[{"}), content_type="application/json"
        )
        client.post(
            f"/query_memory/{NAME}", data=json.dumps({"query": SECRET_QUERY}), content_type="application/json"
        )
        client.post(
            f"/query_memory/{NAME}?format=markdown",
            data=json.dumps({"query": SECRET_QUERY, "time": "昨天"}),
            content_type="application/json",
        )
        client.get(f"/search_for_memory/{NAME}/{SECRET_QUERY}")
        for path in ("new_dialog", "get_recent_history", "last_conversation_gap"):
            client.get(f"/{path}/{NAME}")
        client.post(f"/cancel_correction/{NAME}")
        for path in ("facts/", "raw/", "recent/", "recent/window/"):
            client.get(f"/api/v1/characters/{NAME}/{path}")
        internal_client.post("/reload", data=b"{}", content_type="application/json")
        client.post("/reload", data=b"{}", content_type="application/json", HTTP_AUTHORIZATION="Bearer wrong")
        client.get("/health")
        for schedule in registered_schedules():
            call(schedule.func)
    assert llm_server.requests, "no job reached the LLM: the check would prove nothing"
    assert SECRET_TEXT in json.dumps([r.json for r in llm_server.requests], ensure_ascii=False)
    assert any(r.levelno == logging.INFO for r in caplog.records)
    assert leaked(caplog.records) == []
