"""The install's memory folder in install mode (issue 32): live views, edits from outside, refusals,
the first-start migration and the re-read on ``continue``, in-process passes over a copy of
``tests/fixtures/neko_install_folder``."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from django.urls import reverse

from facts.models import Fact
from install.folder import install_folder_pass
from install.migration import (
    MIGRATION_REASON,
    install_migration_abandoned_release,
    install_migration_begin,
    install_migration_needed,
    install_migration_run,
)
from install.models import FolderFile
from install.take_in import install_folder_reread
from nekomem.characters.models import Character
from recent.models import RawMessage, RecentMessage

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "neko_install_folder"


@pytest.fixture
def install(settings, tmp_path) -> Path:
    root = tmp_path / "N.E.K.O"
    shutil.copytree(FIXTURE, root)
    settings.NEKOMEM_NEKO_ROOT = root
    return root


@pytest.fixture
def migrated(install) -> Path:
    assert install_migration_begin()
    install_migration_run()
    return install


def _turn(client, name: str, human: str, ai: str) -> None:
    body = {
        "input_history": json.dumps(
            [{"type": "human", "data": {"content": human}}, {"type": "ai", "data": {"content": ai}}],
            ensure_ascii=False,
        )
    }
    response = client.post(f"/cache/{name}", data=json.dumps(body), content_type="application/json")
    assert response.status_code == 200 and response.json()["status"] == "cached", response.content


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(folder).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _raw_rows(path: Path) -> list[str]:
    db = sqlite3.connect(path)
    try:
        return [m for (m,) in db.execute("SELECT message FROM time_indexed_original ORDER BY timestamp, id")]
    finally:
        db.close()


def _browser_save(path: Path, chat: list[tuple[str, str]]) -> None:
    """What the original memory browser writes on save (§8): the LangChain dicts rebuilt from
    ``{role, text}`` with ``type = role``, written whole."""
    messages = [{"type": role, "data": {"content": text, "type": role}} for role, text in chat]
    path.write_text(json.dumps(messages, ensure_ascii=False, indent=2), encoding="utf-8")


def test_first_start_takes_in_every_character_once_behind_a_409(client, install):
    initial = _snapshot(install / "memory")
    assert install_migration_needed()
    assert install_migration_begin()
    blocked = client.get("/new_dialog/小天")
    assert blocked.status_code == 409
    assert blocked.json()["error_code"] == "storage_startup_blocked"
    assert blocked.json()["blocking_reason"] == MIGRATION_REASON

    reports = install_migration_run()
    assert {r.name for r in reports} == {"小天", "小雪"}
    assert all(r.created and not r.refused for r in reports)
    assert Fact.objects.filter(character__name="小天").count() == 9
    assert Fact.objects.filter(character__name="小雪").count() == 1
    assert client.get("/new_dialog/小雪").status_code == 200
    status = client.get("/api/v1/status/").json()["install"]
    assert status["migration"]["state"] == "done" and status["migration"]["done"] == 2

    # The requests above mirrored characters.json's cards into persona, as the original does when it
    # loads a persona: the first pass writes that back (persona.json and its events), and nothing else
    # of the user's files.
    install_folder_pass(every_file=True)
    after_first_pass = _snapshot(install / "memory")
    for path in ("小天/recent.json", "小天/facts.json", "小天/time_indexed.db", "小雪/recent.json"):
        assert after_first_pass[path] == initial[path], path
    before = after_first_pass
    versions = dict(Character.objects.values_list("name", "memory_version"))
    assert not install_migration_needed()
    assert not install_migration_begin()  # a second start: nothing to migrate
    assert install_folder_pass(every_file=True)
    assert _snapshot(install / "memory") == before  # nothing changed, nothing rewritten
    assert dict(Character.objects.values_list("name", "memory_version")) == versions


def test_turns_reach_recent_json_and_the_raw_log_is_appended(client, migrated):
    folder = migrated / "memory" / "小天"
    _turn(client, "小天", "今天去江边骑车了", "骑了多远呀？")
    _turn(client, "小天", "二十公里！", "好厉害～")  # a burst: one write covers both
    assert install_folder_pass()
    recent = json.loads((folder / "recent.json").read_text(encoding="utf-8"))
    assert [m["data"]["content"] for m in recent[-2:]] == ["二十公里！", "好厉害～"]
    assert recent == [m.as_langchain() for m in RecentMessage.objects.filter(character__name="小天")]
    raw = _raw_rows(folder / "time_indexed.db")
    assert len(raw) == RawMessage.objects.filter(character__name="小天").count()
    assert "二十公里" in raw[-2]

    inode = (folder / "time_indexed.db").stat().st_ino
    _turn(client, "小天", "明天还去", "带上水哦")
    assert install_folder_pass()
    assert (folder / "time_indexed.db").stat().st_ino == inode  # appended in place, not replaced
    raw = _raw_rows(folder / "time_indexed.db")
    assert "带上水哦" in raw[-1] and len(raw) == RawMessage.objects.filter(character__name="小天").count()

    # nekomem's own writes are never read back as edits.
    versions = dict(Character.objects.values_list("name", "memory_version"))
    report = install_folder_reread()
    assert report is not None and not any(r.files for r in report.taken_in)
    assert dict(Character.objects.values_list("name", "memory_version")) == versions


def test_a_recent_window_saved_by_the_original_browser_is_what_the_chat_sees(
    client, internal_client, migrated
):
    _browser_save(
        migrated / "memory" / "小天" / "recent.json",
        [
            ("system", "先前对话的备忘录: 阿凛养了一只叫团子的猫"),
            ("human", "团子今天学会开门了"),
            ("ai", "团子好聪明！"),
        ],
    )
    assert internal_client.post("/reload", data="{}", content_type="application/json").status_code == 200
    history = client.get("/get_recent_history/小天").content.decode()
    assert "团子今天学会开门了" in history and "阿凛这周在准备" not in history
    dialog = client.get("/new_dialog/小天").content.decode()
    assert "团子好聪明" in dialog
    record = FolderFile.objects.get(name="小天", filename="recent.json")
    assert not record.refused


def test_an_invalid_facts_json_from_outside_is_refused_whole(client, migrated):
    path = migrated / "memory" / "小雪" / "facts.json"
    facts = json.loads(path.read_text(encoding="utf-8"))
    broken = [*facts, {"id": "fact_20250402090000_00000000", "text": "新的事实", "importance": "很高"}]
    broken[0] = {**broken[0], "text": "改过的文字"}
    path.write_text(json.dumps(broken, ensure_ascii=False), encoding="utf-8")
    stored = list(Fact.objects.filter(character__name="小雪").values_list("fact_id", "text", "updated_at"))

    _turn(client, "小雪", "再堆个雪人", "喵！")  # the writer has something to write for 小雪 too
    assert install_folder_pass()
    assert (
        list(Fact.objects.filter(character__name="小雪").values_list("fact_id", "text", "updated_at"))
        == stored
    )
    assert json.loads(path.read_text(encoding="utf-8")) == broken  # left alone, not overwritten
    refused = client.get("/api/v1/status/").json()["install"]["refused"]
    assert [(r["character"], r["file"]) for r in refused] == [("小雪", "facts.json")]
    assert "#1" in refused[0]["reason"] or "importance" in refused[0]["reason"]

    # A valid file in its place is taken in and the refusal goes.
    fixed = [
        {**broken[0]},
        {**facts[0], "id": "fact_20250402090000_00000000", "text": "阿凛想堆雪人", "hash": "0"},
    ]
    path.write_text(json.dumps(fixed, ensure_ascii=False), encoding="utf-8")
    assert install_folder_pass()
    texts = set(Fact.objects.filter(character__name="小雪").values_list("text", flat=True))
    assert texts == {"改过的文字", "阿凛想堆雪人"}
    assert client.get("/api/v1/status/").json()["install"]["refused"] == []


def test_the_character_page_shows_a_refused_file(admin_client, client, migrated):
    (migrated / "memory" / "小天" / "facts.json").write_text("[{", encoding="utf-8")
    assert install_folder_pass()
    page = admin_client.get(reverse("browser-character", kwargs={"name": "小天"})).content.decode()
    assert "memory/小天/facts.json" in page


def test_a_folder_replaced_while_blocked_is_what_is_served_after_continue(
    admin_client, client, internal_client, migrated
):
    memory = migrated / "memory"
    _turn(client, "小天", "我最喜欢的颜色是蓝色", "记住啦，蓝色～")
    assert install_folder_pass()
    assert (
        internal_client.post(
            "/internal/storage/startup/block", data="{}", content_type="application/json"
        ).status_code
        == 200
    )
    # A restore from another machine: 小天's folder is replaced by another copy, 小雪's is gone.
    shutil.rmtree(memory / "小天")
    shutil.copytree(FIXTURE / "memory" / "小雪", memory / "小天")
    _browser_save(
        memory / "小天" / "recent.json", [("human", "恢复后的第一句话：我们去看极光吧"), ("ai", "好呀！")]
    )
    shutil.copytree(memory / "小雪", memory / "小月")  # a character that appears
    shutil.rmtree(memory / "小雪")
    before = _snapshot(memory)
    assert not install_folder_pass()  # blocked: nothing is read or written
    assert _snapshot(memory) == before

    answer = internal_client.post("/internal/storage/startup/continue", content_type="application/json")
    assert answer.status_code == 200, answer.content
    reread = answer.json()["install_folder"]
    assert set(reread["taken_in"]["小天"]) == {"recent.json", "facts.json"}
    assert reread["vanished"] == ["小雪"]
    assert reread["created"] == ["小月"]
    assert Fact.objects.filter(character__name="小月").count() == 1
    assert Character.objects.filter(name="小雪").exists()  # kept, reported, never deleted

    assert "去看极光" in client.get("/new_dialog/小天").content.decode()
    found = client.post(
        "/query_memory/小天",
        data=json.dumps({"query": "热可可"}, ensure_ascii=False),
        content_type="application/json",
    )
    assert "热可可" in found.content.decode()
    # Nothing acknowledged before the block is lost from the restored folder once the writer runs.
    assert install_folder_pass()
    facts = json.loads((memory / "小天" / "facts.json").read_text(encoding="utf-8"))
    assert len(facts) == Fact.objects.filter(character__name="小天", archived=False).count() == 10
    assert any("我最喜欢的颜色是蓝色" in row for row in _raw_rows(memory / "小天" / "time_indexed.db"))
    assert not (memory / "小雪").exists()  # a vanished character's folder is not written back unasked
    assert client.get("/api/v1/status/").json()["install"]["vanished_folders"] == ["小雪"]
    assert "小雪" in admin_client.get(reverse("front_door")).content.decode().split("status-install")[1]


def test_release_character_takes_in_that_characters_edit_at_once(client, migrated):
    _browser_save(
        migrated / "memory" / "小雪" / "recent.json", [("human", "雪人被太阳晒化了"), ("ai", "喵呜……")]
    )
    _browser_save(migrated / "memory" / "小天" / "recent.json", [("human", "这句不该现在读入")])
    assert client.post("/release_character/小雪", content_type="application/json").status_code == 200
    assert "雪人被太阳晒化了" in client.get("/get_recent_history/小雪").content.decode()
    assert "这句不该现在读入" not in client.get("/get_recent_history/小天").content.decode()  # only 小雪's


def test_back_to_standalone_lifts_a_migration_block_left_behind(client, settings, install):
    assert install_migration_begin()  # the install start was killed before its migration finished
    settings.NEKOMEM_NEKO_ROOT = None
    assert client.get("/new_dialog/小天").status_code == 409
    install_migration_abandoned_release()
    assert client.get("/new_dialog/小天").status_code == 200
