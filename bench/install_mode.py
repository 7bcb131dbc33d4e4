"""``/new_dialog`` latency in install mode (``characters.json`` checked before every request) vs standalone.

    .venv/bin/python bench/install_mode.py [--requests 300] [--rounds 6]

One character with the full long-term memory of ``bench/new_dialog_speed.py`` (300 persona entries, 200
reflections, 20 turns, a 20-field card) is read through Django's test client in this process. The same
database is read in rounds that alternate the two modes (so load on the machine hits both alike):
standalone (``NEKOMEM_NEKO_ROOT`` unset) and install mode with an unchanged ``characters.json`` (one stat
per request). A third row edits one card field before every 20th request, so that request re-reads the
file and mirrors the card. Target: install-mode p95 within 1 ms of standalone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.new_dialog_speed import percentile, populate  # noqa: E402

TARGET_DELTA_MS = 1.0
EDIT_EVERY = 20


def write_install(root: Path, *, edition: int = 0) -> None:
    config = root / "config"
    config.mkdir(parents=True, exist_ok=True)
    data = {
        "主人": {"档案名": "阿凛", **{f"字段{n}": f"值{n}" for n in range(12)}},
        "猫娘": {"小天": {**{f"设定{n}": f"内容{n}" for n in range(8)}, "设定0": f"内容0-{edition}"}},
        "当前猫娘": "小天",
    }
    (config / "characters.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    (config / "core_config.json").write_text(json.dumps({"powerful_memory_enabled": True}), encoding="utf-8")


def timed(client, name: str, requests: int, *, before=None) -> list[float]:
    timings = []
    for n in range(requests):
        if before is not None:
            before(n)
        start = time.perf_counter()
        response = client.get(f"/new_dialog/{name}")
        timings.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="requests per mode and round")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="nekomem-bench-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")
    os.environ.setdefault("NEKOMEM_VAR_DIR", tmp)
    os.environ.setdefault("NEKOMEM_REQUIRE_MODELS", "0")
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client, override_settings

    from nekomem.runtime.startup import startup_run

    call_command("migrate", verbosity=0)
    if not startup_run():
        raise SystemExit("startup failed")
    name = "小天"
    populate(name)
    root = Path(tmp) / "N.E.K.O"
    write_install(root)
    client = Client(HTTP_HOST="127.0.0.1")
    with override_settings(NEKOMEM_NEKO_ROOT=root):
        client.get(f"/new_dialog/{name}")  # the first sync mirrors the card once
    client.get(f"/new_dialog/{name}")

    edition = 0

    def edit(n: int) -> None:
        nonlocal edition
        if n % EDIT_EVERY == 0:
            edition += 1
            write_install(root, edition=edition)

    standalone: list[float] = []
    installed: list[float] = []
    edited: list[float] = []
    for _ in range(args.rounds):
        standalone += timed(client, name, args.requests)
        with override_settings(NEKOMEM_NEKO_ROOT=root):
            installed += timed(client, name, args.requests)
            edited += timed(client, name, args.requests // 4, before=edit)

    base = percentile(standalone, 0.95)
    rows = [("mode", "requests", "p50 ms", "p95 ms", "p99 ms", "Δp95 vs standalone")]
    for label, timings in (
        ("standalone", standalone),
        ("install, file unchanged", installed),
        (f"install, card edited every {EDIT_EVERY}th", edited),
    ):
        p95 = percentile(timings, 0.95)
        rows.append(
            (
                label,
                str(len(timings)),
                f"{percentile(timings, 0.50):.2f}",
                f"{p95:.2f}",
                f"{percentile(timings, 0.99):.2f}",
                "—" if timings is standalone else f"{p95 - base:+.2f}",
            )
        )
    delta = percentile(installed, 0.95) - base
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    backend = os.environ["DATABASE_URL"].split(":", 1)[0]
    print(f"/new_dialog in install mode ({backend}): 300 persona entries, 200 reflections, 20 turns")
    for row in rows:
        print("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    verdict = "met" if delta <= TARGET_DELTA_MS else "MISSED"
    print(f"  target: install p95 within {TARGET_DELTA_MS:.0f} ms of standalone ({verdict}: {delta:+.2f} ms)")
    print(f"  load average (1 min) / cores: {os.getloadavg()[0]:.1f} / {os.cpu_count()}")


if __name__ == "__main__":
    main()
