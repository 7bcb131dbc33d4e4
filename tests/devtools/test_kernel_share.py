"""The kernel's share of the code: what is counted, per package, and the lint's threshold."""

from __future__ import annotations

from pathlib import Path

import pytest

from nekomem.devtools import kernel_share
from nekomem.devtools.kernel_share import kernel_lines, line_counts, main

REPO = Path(__file__).resolve().parents[2]


def write(root: Path, files: dict[str, int]) -> Path:
    for relative, lines in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n" * lines, encoding="utf-8")
    return root


def test_tests_benchmarks_migrations_and_hidden_folders_are_not_counted(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "nekomem/runtime/state.py": 30,
            "nekomem/urls.py": 5,
            "nekomem/runtime/migrations/0001_initial.py": 500,
            "recall/engine/bm25.py": 40,
            "recall/migrations/0002.py": 900,
            "tests/recall/test_engine.py": 700,
            "bench/recall_eval.py": 800,
            ".venv/lib/site.py": 999,
            "manage.py": 25,
        },
    )
    counts = line_counts(tmp_path)
    assert dict(counts) == {"nekomem/runtime": 30, "nekomem/*.py": 5, "recall": 40, "*.py": 25}
    assert kernel_lines(counts) == 35


def test_the_lint_fails_above_the_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, {"nekomem/journal/jobs.py": 30, "recall/views.py": 70})
    monkeypatch.setattr(kernel_share, "THRESHOLD", 0.25)
    assert main([str(tmp_path)]) == 1
    assert "kernel 30 / 100 = 30.0%" in capsys.readouterr().out
    monkeypatch.setattr(kernel_share, "THRESHOLD", 0.30)
    assert main([str(tmp_path), "--quiet"]) == 0


def test_the_repository_is_within_the_threshold() -> None:
    assert main([str(REPO), "--quiet"]) == 0
