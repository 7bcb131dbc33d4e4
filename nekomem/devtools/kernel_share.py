"""How much of the code is kernel (`make lint` runs ``python -m nekomem.devtools.kernel_share``).

The kernel (``nekomem/``) is meant to be framework only: locks, journal, jobs, runtime, characters,
LLM and embeddings clients, language, the portability registry, the browser shell, HTTP plumbing
and these dev tools. Domain code belongs to the layer that uses it, so the kernel's share of the
code is a figure that only shrinks: the lint fails when it rises above ``THRESHOLD``.

Counted: physical lines of ``*.py`` files, outside tests, benchmarks and migrations (generated
schema history, not design), and outside the virtualenv and other hidden folders.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

KERNEL = "nekomem"
EXCLUDED_TOPS = frozenset({"tests", "bench", "var", "node_modules"})
# The kernel's share may not rise above this. Lower it as domain code leaves the kernel.
THRESHOLD = 0.25


def counted_files(root: Path) -> Iterator[Path]:
    """Every counted Python file under ``root``, in path order."""
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if parts[0] in EXCLUDED_TOPS or any(part.startswith(".") for part in parts):
            continue
        if "migrations" in parts:
            continue
        yield path


def line_counts(root: Path) -> Counter[str]:
    """Lines per package: a top-level app, or ``nekomem/<package>`` inside the kernel."""
    counts: Counter[str] = Counter()
    for path in counted_files(root):
        parts = path.relative_to(root).parts
        if parts[0] == KERNEL and len(parts) > 2:
            unit = f"{parts[0]}/{parts[1]}"
        elif parts[0] == KERNEL:
            unit = f"{KERNEL}/*.py"
        elif len(parts) > 1:
            unit = parts[0]
        else:
            unit = "*.py"
        with path.open("rb") as handle:
            counts[unit] += sum(1 for _ in handle)
    return counts


def kernel_lines(counts: Counter[str]) -> int:
    return sum(lines for unit, lines in counts.items() if unit.split("/")[0] == KERNEL)


def report(counts: Counter[str]) -> list[str]:
    total = sum(counts.values())
    kernel = kernel_lines(counts)
    width = max(len(unit) for unit in counts)
    lines = [f"{'package':<{width}}  {'lines':>6}  {'share':>6}"]
    for unit, count in sorted(counts.items(), key=lambda item: (item[0].split("/")[0] != KERNEL, item[0])):
        lines.append(f"{unit:<{width}}  {count:>6}  {count / total:>6.1%}")
    lines.append(f"kernel {kernel} / {total} = {kernel / total:.1%} (threshold {THRESHOLD:.0%})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The kernel's share of the non-test, non-bench code.")
    parser.add_argument("root", nargs="?", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--quiet", action="store_true", help="print only the total line and errors")
    args = parser.parse_args(argv)
    counts = line_counts(args.root)
    lines = report(counts)
    print("\n".join(lines[-1:] if args.quiet else lines))
    share = kernel_lines(counts) / sum(counts.values())
    if share > THRESHOLD:
        print(
            f"the kernel is {share:.1%} of the code, above {THRESHOLD:.0%}: move domain code to its layer",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
