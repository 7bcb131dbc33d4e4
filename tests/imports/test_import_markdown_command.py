"""``manage.py import_markdown PATH --character NAME`` over a fixture workspace, a zip, and 45 days."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from facts.models import Fact
from imports.services.markdown_workspace import markdown_lines, workspace_read
from persona.models import PersonaEntry
from tests.support.llm_server import error, json_content

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FOLDER = FIXTURES / "openclaw_workspace"
ZIP = FIXTURES / "hermes_workspace.zip"


def run(path: Path, *extra: str) -> str:
    out = StringIO()
    call_command("import_markdown", str(path), "--character", "小八", *extra, stdout=out)
    return out.getvalue()


def test_markdown_lines_drop_headings_fences_and_bullets() -> None:
    lines = markdown_lines("# T\n\n## 喜好\n- 喜欢喝乌龙茶\n```\n- code\n```\n1. second\n---\n")
    assert lines == [("喜欢喝乌龙茶", "喜好"), ("second", "喜好")]


def test_a_folder_workspace_is_imported(llm_server) -> None:
    llm_server.script(
        json_content(["主人小林住在杭州，是游戏策划，爱喝无糖乌龙茶"]), json_content(["I am Hachi"])
    )
    output = run(FOLDER, "--language", "zh")
    assert "added 2 persona statements and 4 facts" in output
    master_prompt = llm_server.bodies[0]["messages"][0]["content"]
    assert "名字：小林" in master_prompt and "乌龙茶" in master_prompt and "Hachi" not in master_prompt
    assert "cheerful catgirl" in llm_server.bodies[1]["messages"][0]["content"]
    texts = set(Fact.objects.values_list("text", flat=True))
    assert "主人对花生过敏" in texts and "# not a memory: a code sample" not in texts
    overtime = Fact.objects.get(text="主人今天加班到很晚，说项目下周上线")
    assert overtime.event_start_at is not None and overtime.event_start_at.date().isoformat() == "2026-11-01"
    assert overtime.importance == 7 and overtime.source == "user_observation"


def test_the_zip_imports_the_same_and_a_second_run_adds_nothing(llm_server) -> None:
    llm_server.script(json_content(["主人小林住在杭州"]), json_content(["I am Hachi"]))
    first = run(ZIP, "--format", "hermes")
    assert "added 2 persona statements and 4 facts" in first
    again = run(ZIP, "--format", "hermes")
    assert "added 0 persona statements and 0 facts; 4 already there" in again
    assert len(llm_server.bodies) == 2  # both entities were fused already: no new call
    assert PersonaEntry.objects.filter(source="external_import").count() == 2
    assert Fact.objects.count() == 4


def test_a_failing_provider_is_reported_and_the_rerun_completes(llm_server) -> None:
    llm_server.script(error(500), error(500), error(500), json_content(["I am Hachi"]))
    with pytest.raises(CommandError, match="could not fuse master"):
        run(FOLDER)
    assert Fact.objects.count() == 4
    llm_server.script(json_content(["主人小林住在杭州"]))
    assert "added 1 persona statements and 0 facts" in run(FOLDER)
    assert Fact.objects.count() == 4
    assert PersonaEntry.objects.filter(source="external_import").count() == 2


def test_at_most_45_days_per_import(tmp_path: Path) -> None:
    notes = tmp_path / "memory"
    notes.mkdir()
    for day in range(1, 51):
        month, dom = (10, day) if day <= 31 else (11, day - 31)
        (notes / f"2026-{month:02d}-{dom:02d}.md").write_text(f"- note of day {day}\n", encoding="utf-8")
    ws = workspace_read(path=tmp_path)
    assert len(ws.candidates) == 45
    assert ws.skipped_days == [f"2026-10-{d:02d}" for d in range(1, 6)]  # the oldest five wait
    assert any("45" in warning for warning in ws.warnings)


def test_a_path_that_is_no_workspace_fails_clearly(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(CommandError, match=r"no USER\.md"):
        run(tmp_path)
    with pytest.raises(CommandError, match="neither a folder nor a zip"):
        run(tmp_path / "notes.txt")
