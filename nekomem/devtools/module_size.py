"""No module holds several subjects: none over ``MAX_LINES`` (`make lint` runs
``python -m nekomem.devtools.module_size``).

A module that grows past it becomes a package split by subject, or a few modules named for theirs.
Not counted: benchmarks (``bench/``), migrations (generated) and locale tables (``locales/``: one
language's strings each), nor the virtualenv and other hidden folders.

``ALLOWED`` lists the modules over the limit that are being split now, each with the work that does
it. An entry whose module is back under the limit (or gone) is reported as a note to remove it, not
an error: those splits land from parallel branches, and each merge must not break the lint.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

MAX_LINES = 500
EXCLUDED_TOPS = frozenset({"bench", "var", "node_modules"})
EXCLUDED_DIRS = frozenset({"migrations", "locales"})

# path -> why it is over the limit for now (issue 51: each is being split by another branch).
ALLOWED: dict[str, str] = {}


def counted_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if parts[0] in EXCLUDED_TOPS or any(part.startswith(".") for part in parts):
            continue
        if EXCLUDED_DIRS.intersection(parts[:-1]):
            continue
        yield path


def oversized(root: Path) -> dict[str, int]:
    """Every counted module over ``MAX_LINES``, with its line count."""
    found: dict[str, int] = {}
    for path in counted_files(root):
        with path.open("rb") as handle:
            lines = sum(1 for _ in handle)
        if lines > MAX_LINES:
            found[path.relative_to(root).as_posix()] = lines
    return found


def report(root: Path, allowed: dict[str, str] = ALLOWED) -> tuple[list[str], list[str]]:
    """(errors, notes): modules over the limit and not allowed; allowed ones no longer over it."""
    found = oversized(root)
    errors = [
        f"{path}: {lines} lines, over {MAX_LINES}: split it by subject"
        for path, lines in sorted(found.items())
        if path not in allowed
    ]
    notes = [
        f"{path}: within {MAX_LINES} lines now, remove it from ALLOWED"
        for path in sorted(allowed)
        if path not in found
    ]
    return errors, notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=f"No module over {MAX_LINES} lines.")
    parser.add_argument("root", nargs="?", type=Path, default=Path(__file__).resolve().parents[2])
    args = parser.parse_args(argv)
    errors, notes = report(args.root)
    for line in [*errors, *notes]:
        print(line)
    if errors:
        print(
            f"{len(errors)} module size error(s); the rule: nekomem/devtools/module_size.py", file=sys.stderr
        )
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
