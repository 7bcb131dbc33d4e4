"""Every route of reference §1.8 and every refusal, through the HTTP surface."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from knowledge.models import KnowledgeImport
from knowledge.packs import MAX_PACK_BODY_BYTES
from nekomem.runtime.startup import storage_release
from nekomem.runtime.state import storage_block
from tests.knowledge.conftest import FLAGS
from tests.knowledge.factories import (
    IndexBatchFactory,
    QueryRecordFactory,
    fixture_pack,
    pack_bytes,
    pack_dict,
)

pytestmark = pytest.mark.django_db


def flags(answer) -> dict:
    return {name: answer.json()[name] for name in FLAGS}


def test_availability_and_status_on_an_empty_store(get):
    answer = get("availability")
    assert answer.status_code == 200
    assert answer.json() == {"ok": True, "ready": True, "enabled": True, "tool_available": False}
    status = get("status").json()["status"]
    assert status["state"] == "ready" and status["packs"] == 0 and status["indexed_percent"] == 0.0
    assert set(status["embedding"]) == {"state", "model_id"}


def test_import_makes_the_tool_available(imported, get):
    job = imported()
    assert job["state"] == "queued" and job["pack_id"] == "memes.test" and len(job["job_id"]) == 32
    assert flags(get("availability")) == {"ready": True, "enabled": True, "tool_available": True}
    pack = get("packs").json()["packs"][0]
    assert pack["entries"] == 2 and pack["effective_material_type"] == "knowledge"
    assert pack["vector_state"] in {"waiting", "paused", "building", "complete", "partial"}
    assert pack["broken"] is False and pack["auto_context"] is False and pack["local_embedding"] is True
    jobs = get("packs/jobs").json()["jobs"]
    assert [j["state"] for j in jobs] == ["active"]


def test_identical_pack_is_unchanged(imported):
    imported()
    assert imported() == {
        "ok": True,
        "pack_id": "memes.test",
        "unchanged": True,
        "state": "active",
        "ready": True,
        "enabled": True,
        "tool_available": True,
    }


def test_import_as_multipart_with_one_file_part(internal_client: Client, django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("pack.json", pack_bytes(fixture_pack()), content_type="application/json")
    with django_capture_on_commit_callbacks(execute=True):
        answer = internal_client.post("/internal/knowledge/packs/import", {"file": upload})
    assert answer.status_code == 200 and answer.json()["state"] == "queued"
    one = SimpleUploadedFile("a.json", b"{}", content_type="application/json")
    two = SimpleUploadedFile("b.json", b"{}", content_type="application/json")
    answer = internal_client.post("/internal/knowledge/packs/import", {"a": one, "b": two})
    assert answer.status_code == 400 and answer.json() == {"ok": False, "reason": "invalid_request"}


def test_import_rejection_reasons_are_refusals(post):
    answer = post("packs/import", b"{nope")
    assert answer.status_code == 200
    assert answer.json()["ok"] is False and answer.json()["reason"] == "invalid_json"
    assert post("packs/import", pack_bytes(pack_dict(pack_id="X"))).json()["reason"] == "invalid_pack_id"


def test_pack_too_large_is_413(post):
    answer = post("packs/import", b" " * (MAX_PACK_BODY_BYTES + 1))
    assert answer.status_code == 413 and answer.json() == {"ok": False, "reason": "pack_too_large"}
    assert post("packs/import", b" " * (10 * 1024 * 1024 + 1)).json()["reason"] == "pack_too_large"


def test_entries_and_entry(imported, get):
    imported()
    page = get("entries", limit=1).json()
    assert page["total"] == 2 and page["has_more"] is True and len(page["items"]) == 1
    searched = get("entries", query="rick").json()
    assert searched["total"] is None and [i["title"] for i in searched["items"]] == ["Rickroll"]
    assert get("entries", pack_id="memes.test", offset=1).json()["items"][0]["title"] == "Rickroll"
    entry = get("entry", pack_id="memes.test", title="rickroll").json()["entry"]
    assert entry["content"].startswith("A rickroll") and entry["disabled"] is False
    missing = get("entry", pack_id="memes.test", title="nothing")
    assert missing.status_code == 200 and missing.json()["reason"] == "not_found"
    assert get("entries", limit=0).status_code == 400
    assert get("entries", offset=20_001).status_code == 400
    assert get("entry", pack_id="memes.test").status_code == 400


def test_content_preview_is_cut_at_180(imported, get):
    pack = pack_dict(entries=0) | {"entries": [{"title": "Long", "content": "word " * 100}]}
    imported(pack)
    preview = get("entries").json()["items"][0]["content_preview"]
    assert len(preview) == 183 and preview.endswith("...")


def test_entry_disabled_survives_reimport(imported, post, get):
    imported()
    answer = post("entry/disabled", {"pack_id": "memes.test", "title": "芝士雪豹", "disabled": True}).json()
    assert answer["disabled"] is True and answer["disabled_entries"] == 1
    changed = fixture_pack()
    changed["entries"][1]["summary"] = "A prank."
    imported(changed)
    items = {item["title"]: item["disabled"] for item in get("entries").json()["items"]}
    assert items == {"芝士雪豹": True, "Rickroll": False}
    assert get("packs").json()["packs"][0]["disabled_entries"] == 1
    missing = post("entry/disabled", {"pack_id": "memes.test", "title": "none", "disabled": True}).json()
    assert missing["reason"] == "not_found"


def test_pack_state_routes_and_survival(imported, post, get):
    imported()
    assert (
        post("packs/auto-context", {"pack_id": "memes.test", "enabled": True}).json()["auto_context"] is True
    )
    policy = post("packs/index-policy", {"pack_id": "memes.test", "local_embedding_enabled": False}).json()
    assert policy["local_embedding"] is False
    material = post("packs/material-type", {"pack_id": "memes.test", "material_type": "corpus"}).json()
    assert material["material_type_override"] == "corpus" and material["effective_material_type"] == "corpus"
    changed = fixture_pack()
    changed["source"]["license"] = "CC0"
    imported(changed)
    pack = get("packs").json()["packs"][0]
    assert (pack["auto_context"], pack["local_embedding"], pack["material_type_override"]) == (
        True,
        False,
        "corpus",
    )
    assert pack["vector_state"] == "off"
    cleared = post("packs/material-type", {"pack_id": "memes.test", "material_type": None}).json()
    assert cleared["material_type_override"] is None and cleared["effective_material_type"] == "knowledge"
    assert post("packs/material-type", {"pack_id": "memes.test", "material_type": "x"}).status_code == 400
    for route in ("packs/auto-context", "packs/index-policy"):
        assert post(route, {"pack_id": "memes.test"}).status_code == 400
        assert (
            post(route, {"pack_id": "nope.pack", "enabled": True, "local_embedding_enabled": True}).json()[
                "reason"
            ]
            == "not_found"
        )


def test_remove(imported, post, get):
    imported()
    assert post("packs/remove", {"pack_id": "memes.test"}).json()["removed_entries"] == 2
    assert get("packs").json()["packs"] == []
    assert get("availability").json()["tool_available"] is False
    again = post("packs/remove", {"pack_id": "memes.test"})
    assert again.status_code == 200 and again.json()["reason"] == "not_found"


def test_settings(post, get, imported):
    imported()
    answer = post("settings", {"enabled": False}).json()
    assert answer["enabled"] is False and answer["tool_available"] is False
    assert post("settings", {"enabled": "no"}).status_code == 400
    assert post("settings", {}).status_code == 400
    assert get("packs").json()["packs"][0]["vector_state"] in {"paused", "complete"}


def test_cancel_and_discard_answers(post, imported):
    job = imported()
    cancelled = post("packs/jobs/cancel", {"job_id": job["job_id"]}).json()
    assert cancelled["ok"] is False and cancelled["job_id"] == job["job_id"]
    assert post("packs/jobs/discard", {"job_id": job["job_id"]}).json()["ok"] is True
    assert post("packs/jobs/discard", {"job_id": job["job_id"]}).json()["ok"] is False
    assert post("packs/jobs/cancel", {}).status_code == 400
    assert post("packs/jobs/discard", {"job_id": 3}).status_code == 400


def test_diagnostics(get):
    QueryRecordFactory.create_batch(55)
    IndexBatchFactory()
    answer = get("diagnostics/recent").json()
    assert len(answer["queries"]) == 50 and len(answer["index_batches"]) == 1
    assert set(answer["queries"][0]) == {
        "timestamp",
        "mode",
        "result",
        "retrieval_mode",
        "hits",
        "entry_title",
        "pack_id",
        "elapsed_ms",
        "error_type",
    }


def test_query_validation_and_disabled(post):
    assert post("query", {"limit": 3}).status_code == 400
    assert post("query", b"[1]").status_code == 400
    assert post("query", b"{bad").status_code == 400
    assert post("query", {"query": "x" * (64 * 1024)}).status_code == 400
    post("settings", {"enabled": False})
    answer = post("query", {"query": "rick"}).json()
    assert answer["ok"] is True and answer["result"] == "disabled" and answer["context"] == ""
    assert answer["hits"] == [] and answer["card_ids"] == []


@pytest.mark.parametrize(
    "route",
    [
        "query",
        "settings",
        "packs/jobs/cancel",
        "packs/jobs/discard",
        "entry/disabled",
        "packs/auto-context",
        "packs/index-policy",
        "packs/material-type",
        "packs/remove",
    ],
)
def test_json_routes_refuse_other_media_types(post, route):
    answer = post(route, b"enabled=1", content_type="text/plain")
    assert answer.status_code == 400 and answer.json() == {"ok": False, "reason": "invalid_request"}


def test_cross_site_is_403(internal_client: Client, post):
    assert post("settings", {"enabled": True}, HTTP_REFERER="https://evil.example/page").status_code == 403
    assert post("settings", {"enabled": True}, HTTP_ORIGIN="https://evil.example").status_code == 403
    assert (
        internal_client.get("/internal/knowledge/packs", HTTP_REFERER="https://evil.example/").status_code
        == 403
    )


def test_storage_block_is_409(get):
    storage_block(reason="test")
    try:
        assert get("packs").status_code == 409
    finally:
        storage_release()


def test_internal_routes_need_the_secret():
    assert Client().get("/internal/knowledge/packs").status_code in {401, 403}


def test_job_in_progress_and_busy(post):
    first = post("packs/import", pack_bytes(pack_dict(pack_id="one.pack"))).json()
    assert first["state"] == "queued"
    assert post("packs/import", pack_bytes(pack_dict(pack_id="one.pack", entries=3))).json()["reason"] == (
        "job_in_progress"
    )
    post("packs/import", pack_bytes(pack_dict(pack_id="two.pack")))
    post("packs/import", pack_bytes(pack_dict(pack_id="three.pack")))
    assert (
        post("packs/import", pack_bytes(pack_dict(pack_id="four.pack"))).json()["reason"] == "knowledge_busy"
    )
    assert KnowledgeImport.objects.filter(state="queued").count() == 3
    cancelled = post("packs/jobs/cancel", {"job_id": first["job_id"]}).json()
    assert cancelled["ok"] is True
    assert post("packs/jobs/discard", {"job_id": first["job_id"]}).json()["ok"] is True


def test_unexpected_failure_is_500_knowledge_error(post):
    # A database that lost the table is what an unexpected failure looks like from outside.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "DROP TABLE knowledge_knowledgepack" + (" CASCADE" if connection.vendor == "postgresql" else "")
        )
    answer = post("packs/remove", {"pack_id": "memes.test"})
    assert answer.status_code == 500
    assert answer.json() == {"ok": False, "reason": "knowledge_error"}


def test_query_matches_the_chinese_entry_by_alias_and_renders_the_block(imported, post, get):
    imported()
    answer = post("query", {"query": "雪豹闭嘴", "language": "zh", "budget_ms": 2000}).json()
    assert answer["ok"] is True and answer["result"] == "matched"
    assert answer["hits"][0] == {"pack_id": "memes.test", "title": "芝士雪豹", "material_type": "knowledge"}
    assert answer["card_ids"][0] == "memes.test/芝士雪豹"
    assert "======以下为本地公共知识参考======" in answer["context"]
    assert answer["retrieval_mode"] in {"bm25", "hybrid"} and answer["elapsed_ms"] >= 0
    assert answer["tool_available"] is True
    english = post("query", {"query": "what is a rickroll", "language": "en"}).json()
    assert english["result"] == "matched" and english["hits"][0]["title"] == "Rickroll"
    diagnostics = get("diagnostics/recent").json()["queries"]
    assert diagnostics[0]["entry_title"] == "Rickroll" and "query" not in diagnostics[0]


def test_query_never_returns_a_disabled_entry_and_sample_by_tag(imported, post):
    imported()
    post("entry/disabled", {"pack_id": "memes.test", "title": "Rickroll", "disabled": True})
    answer = post("query", {"query": "rickroll"}).json()
    assert all(hit["title"] != "Rickroll" for hit in answer["hits"])
    sample = post("query", {"query": "domain:meme", "mode": "sample", "limit": 5}).json()
    assert sample["result"] == "matched" and sample["retrieval_mode"] == "sample"
    assert [hit["title"] for hit in sample["hits"]] == ["芝士雪豹"]


def test_query_miss_and_material_type_filter(imported, post):
    imported()
    assert post("query", {"query": "完全无关的内容 zebra"}).json()["result"] == "miss"
    corpus_only = post("query", {"query": "rickroll", "material_type": "corpus"}).json()
    assert corpus_only["result"] == "miss" and corpus_only["context"] == ""


def test_openapi_schema_lists_the_17_routes(client: Client):
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    knowledge = sorted(path for path in schema["paths"] if path.startswith("/internal/knowledge/"))
    assert len(knowledge) == 17
    assert "413" in schema["paths"]["/internal/knowledge/packs/import"]["post"]["responses"]


def test_import_takes_json_or_multipart_only(post):
    answer = post("packs/import", pack_bytes(fixture_pack()), content_type="text/plain")
    assert answer.status_code == 400 and answer.json() == {"ok": False, "reason": "invalid_request"}


def test_before_startup_routes_answer_knowledge_starting_and_availability_stays_200(rf):
    from knowledge import views
    from nekomem.runtime.startup import startup_run
    from nekomem.runtime.state import set_initializing

    set_initializing()
    try:
        starting = views.packs(rf.get("/internal/knowledge/packs"))
        assert starting.status_code == 503
        assert json.loads(starting.content) == {"ok": False, "reason": "knowledge_starting"}
        flags_only = views.availability(rf.get("/internal/knowledge/availability"))
        assert flags_only.status_code == 200
        assert json.loads(flags_only.content) == {
            "ok": True,
            "ready": False,
            "enabled": False,
            "tool_available": False,
        }
        status_answer = json.loads(views.status(rf.get("/internal/knowledge/status")).content)
        assert status_answer["status"]["state"] == "starting"
    finally:
        assert startup_run()


def test_a_lookup_during_a_storage_block_records_nothing(imported):
    from knowledge import services
    from knowledge.models import QueryRecord

    imported()
    storage_block(reason="test")
    try:
        assert services.knowledge_query(query="rickroll")["result"] == "matched"
    finally:
        storage_release()
    assert QueryRecord.objects.count() == 0
