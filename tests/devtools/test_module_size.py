"""No module over the line limit, outside benchmarks, migrations and locale tables."""

from __future__ import annotations

from pathlib import Path

from nekomem.devtools.module_size import MAX_LINES, main, report

REPO = Path(__file__).resolve().parents[2]


def write(root: Path, files: dict[str, int]) -> Path:
    for relative, lines in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n" * lines, encoding="utf-8")
    return root


def test_an_oversized_module_fails_unless_allowed_and_excluded_places_do_not_count(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "recall/engine/index.py": MAX_LINES + 1,
            "recall/views.py": MAX_LINES + 5,
            "recall/rendering.py": MAX_LINES,
            "bench/recall_eval.py": 5 * MAX_LINES,
            "facts/migrations/0001_initial.py": 5 * MAX_LINES,
            "facts/locales/zh.py": 5 * MAX_LINES,
        },
    )
    allowed = {"recall/engine/index.py": "being split", "recall/gone.py": "split already"}
    errors, notes = report(tmp_path, allowed)
    assert errors == [f"recall/views.py: {MAX_LINES + 5} lines, over {MAX_LINES}: split it by subject"]
    assert notes == [f"recall/gone.py: within {MAX_LINES} lines now, remove it from ALLOWED"]


def test_the_repository_has_no_module_over_the_limit() -> None:
    assert main([str(REPO)]) == 0
