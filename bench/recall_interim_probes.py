"""Which probe questions the interim path (``recall.interim``) answers empty while the built index answers
them: a small in-process reproduction of ``recall_realistic``'s "meanwhile ... empty" count.

    .venv/bin/python bench/recall_interim_probes.py [--facts 5000] [--raw 5000] [--uncovered-raw 1000]

Writes the bench's directory (``bench.recall_realistic.write_directory``), imports it into a scratch
SQLite database and asks every probe of ``recall_realistic`` twice, lexically (no vectors): from the
interim index and from an index of the whole character. Needs ../shared/data.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.recall_realistic import NAME, write_directory  # noqa: E402
from bench.recall_speed import questions  # noqa: E402
from bench.scratch import django_on_scratch_database  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=5000)
    parser.add_argument("--raw", type=int, default=5000)
    parser.add_argument("--uncovered-raw", type=int, default=1000)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="nekomem-interim-probes-"))
    write_directory(work / "import", facts=args.facts, raw=args.raw, uncovered=args.uncovered_raw)
    django_on_scratch_database(work)
    from django.core.management import call_command

    from nekomem.characters.models import Character
    from recall.engine import RecallIndex
    from recall.interim import interim_index, interim_terms
    from recall.selectors import fact_candidates, raw_turn_candidates

    call_command("import_memory", str(work / "import"), verbosity=0)
    character = Character.objects.get(name=NAME)
    names = tuple(character.stop_names)
    full = RecallIndex(
        [
            *fact_candidates(character_id=character.pk, space=None),
            *raw_turn_candidates(character_id=character.pk, space=None),
        ],
        stop_names=names,
        dim=None,
    )
    qs = list(dict.fromkeys(questions()))
    empty: list[tuple[str, list[str]]] = []
    elapsed: list[float] = []
    for query in qs:
        started = time.perf_counter()
        interim = interim_index(character_id=character.pk, query=query, stop_names=names, space=None)
        hits = interim.search(query)
        elapsed.append((time.perf_counter() - started) * 1000)
        if not hits and full.search(query):
            looked_for = interim_terms(query, names)
            empty.append((query, looked_for.first + looked_for.then))
    elapsed.sort()
    print(
        f"{len(qs)} probes, {len(full)} rows; interim empty where the full index answers: {len(empty)};"
        f" interim p50 {elapsed[len(elapsed) // 2]:.1f} / max {elapsed[-1]:.1f} ms"
    )
    for query, terms in empty:
        print(f"  {query!r}  terms {terms}")


if __name__ == "__main__":
    main()
