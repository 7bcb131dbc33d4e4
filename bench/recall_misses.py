"""The miss report and the results file of ``bench/recall_eval.py`` (``--misses DIR``, ``--write-results``).

A miss is a development probe whose gold turn is not in the default configuration's top 8. For each, the
report gives where every path ranked the gold turn over the whole conversation (no threshold, no cut), its
place in the default fused list (the union of each path's top ``per_path``), the rows that outranked it,
and tags that guess why. The tags are heuristics for reading, not a diagnosis; nothing here tunes recall.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from bench import shared_data

ROOT = Path(__file__).resolve().parent.parent
RESULTS_FILE = ROOT / "docs" / "recall-results.md"
TOP_K = 8
NEAR_MISS = 20  # fused ranks 9..NEAR_MISS are "near misses"
NEAR_DUPLICATE = 0.5  # token Jaccard between the gold text and a row above it

# Words that ask for a time; the project's own time parser catches the expressions that name one.
_WHEN = re.compile(
    r"\b(when|what time|what year|what month|what date|how long ago|which day|which year)\b"
    r"|什么时候|什麼時候|哪天|哪一天|几号|幾號|何时|何時|哪年|几月|幾月|多久",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u9fff]")
_STOP_WORDS = (
    "a an the and or of to in on at for with is are was were be been do did does i you he she it we they "
    "my your his her its our their me him them what who whom which when where why how that this there "
    "have has had not no yes so but if as by from about"
)
_STOP = frozenset(_STOP_WORDS.split(" "))
# Tag precedence: the first that applies is the miss's kind in the counts.
KINDS = (
    "near_duplicate",
    "no_shared_terms",
    "time_question",
    "not_a_candidate",
    "near_miss",
    "deep",
)
KIND_TEXT = {
    "near_duplicate": "outranked by a near duplicate (token Jaccard ≥ 0.5 with a row above it)",
    "no_shared_terms": "no shared terms (BM25 scores the gold turn 0: only the cosine path can find it)",
    "time_question": "the question asks when / names a time; the turn's date is not used in ranking",
    "not_a_candidate": "outside every path's top 20: never reaches fusion",
    "near_miss": "reaches fusion, fused rank 9–20",
    "deep": "reaches fusion, fused rank > 20",
}


def tokens(text: str) -> set[str]:
    out: set[str] = set()
    for word in _TOKEN.findall(text.lower()):
        if _CJK.search(word):
            # Chinese has no spaces: character bigrams stand for words.
            chars = [c for c in word if _CJK.match(c)]
            out.update(a + b for a, b in itertools.pairwise(chars))
            out.update(chars if len(chars) == 1 else [])
        elif word not in _STOP:
            out.add(word)
    return out


def _body(text: str) -> str:
    """A fact's text without the speaker it starts with ("Caroline: …")."""
    head, sep, rest = text.partition(": ")
    return rest if sep and len(head) <= 40 else text


def jaccard(a: str, b: str) -> float:
    x, y = tokens(_body(a)), tokens(_body(b))
    return len(x & y) / len(x | y) if x and y else 0.0


@cache
def _turns(set_name: str) -> dict[tuple[str, str], dict]:
    # Turn ids repeat across conversations (LoCoMo's "D1:3"): keyed by conversation too.
    return {(t["conv_id"], t["turn_id"]): t for t in shared_data.turns(set_name)}


def _ranks(conv_id: str, question: str) -> dict[str, dict[str, Any]]:
    """{fact id: {path: {rank, score}}} over the whole conversation (each path uncut, no threshold), and
    {fact id: fused rank} of the default configuration with its cut and thresholds but no result cap."""
    from recall import index_cache
    from recall.engine import DEFAULT
    from recall.index_cache import recall_index
    from recall.selectors import recall_character
    from recall.services.query import _query_vectors

    everything = 10**9
    wide = replace(DEFAULT, name="misses-wide", per_path=everything, total=everything)
    # Each path's own score, without the neighbours' context (the fused rank below has it).
    wide = replace(wide, bm25_threshold=0.0, cosine_threshold=-1.0, context_weight=0.0)
    fused = replace(DEFAULT, name="misses-fused", total=everything)
    character = recall_character(name=conv_id)
    assert character is not None
    with index_cache.answering():
        vectors = _query_vectors(question, DEFAULT)
        index = recall_index(
            character_id=character.pk,
            stop_names=character.stop_names,
            space=vectors.space,
            version=character.memory_version,
            covered=character.raw_covered,
            raw_written=character.raw_written,
        )
        paths = {
            h.candidate.id: {p: {"rank": ph.rank, "score": round(ph.score, 4)} for p, ph in h.paths.items()}
            for h in index.search(question, config=wide, query_vector=vectors.query)
        }
        ranked = index.search(question, config=fused, query_vector=vectors.query)
    fused_rank = {h.candidate.id: r for r, h in enumerate(ranked, start=1)}
    return {"paths": paths, "fused": fused_rank}


def miss_record(
    conv_id: str, probe: dict, results: list[dict], id_map: dict[str, str], *, set_name: str
) -> dict[str, Any]:
    """One miss: the probe, each missing gold turn's ranks and tags, the rows returned above it."""
    evidence = list(dict.fromkeys(probe["evidence_turn_ids"]))
    fact_of = {turn: fact for fact, turn in id_map.items()}
    got = {id_map.get(r["id"]) for r in results}
    ranks = _ranks(conv_id, probe["question"])
    question = probe["question"]
    # A MADial "question" is a whole dialogue: a time word somewhere in it is not a question about time.
    timed = bool(_WHEN.search(question)) or (len(question) <= 200 and _names_time(question))
    gold_rows = []
    for turn_id in evidence:
        fact_id = fact_of.get(turn_id)
        turn = _turns(set_name).get((conv_id, turn_id), {})
        if turn_id in got:
            gold_rows.append({"turn_id": turn_id, "found": True, "text": turn.get("text", "")})
            continue
        paths = ranks["paths"].get(fact_id or "", {})
        fused = ranks["fused"].get(fact_id or "")
        text = next((r["text"] for r in results if r["id"] == fact_id), None) or _fact_text(turn)
        duplicate = max((jaccard(text, r["text"]) for r in results), default=0.0)
        tags = []
        if duplicate >= NEAR_DUPLICATE:
            tags.append("near_duplicate")
        if "bm25:words" not in paths:
            tags.append("no_shared_terms")
        if timed:
            tags.append("time_question")
        if fused is None:
            tags.append("not_a_candidate")
        elif fused <= NEAR_MISS:
            tags.append("near_miss")
        else:
            tags.append("deep")
        gold_rows.append(
            {
                "turn_id": turn_id,
                "found": False,
                "text": text,
                "timestamp": turn.get("timestamp"),
                "bm25_words": paths.get("bm25:words"),
                "bm25_original": paths.get("bm25:original"),
                "cosine": paths.get("cosine"),
                "fused_rank": fused,
                "max_jaccard_above": round(duplicate, 3),
                "tags": tags,
            }
        )
    missing = [g for g in gold_rows if not g["found"]]
    first = min(missing, key=lambda g: g["fused_rank"] or 10**9)
    kind = next(k for k in KINDS if k in first["tags"])
    found = len(gold_rows) - len(missing)
    why = KIND_TEXT[kind] + (f"; {found} of {len(gold_rows)} gold turns found" if found else "")
    return {
        "set": set_name,
        "conv_id": conv_id,
        "question": question,
        "category": probe.get("category"),
        "kind": kind,
        "why": why,
        "gold": gold_rows,
        "above": [
            {
                "rank": i,
                "text": r["text"],
                "paths": {p: v["rank"] for p, v in r.get("explain", {}).get("paths", {}).items()},
                "gold": id_map.get(r["id"]) in set(evidence),
            }
            for i, r in enumerate(results, start=1)
        ],
    }


def _fact_text(turn: dict) -> str:
    if not turn:
        return ""
    return turn["text"] if turn.get("kind") == "memory" else f"{turn['speaker']}: {turn['text']}"


def _names_time(question: str) -> bool:
    from django.conf import settings
    from django.utils import timezone

    from recall.times import find_time_expression

    return find_time_expression(question, now=timezone.now(), tz=settings.TIME_ZONE) is not None


def _rank(path: dict | None) -> str:
    return "—" if path is None else f"{path['rank']} ({path['score']:g})"


def write_misses(folder: Path, set_name: str, misses: list[dict], *, probes: int) -> None:
    """DIR/<set>.jsonl (one miss a line) and DIR/<set>.md (the same, to read, with the counts first)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"{set_name}.jsonl").open("w", encoding="utf-8") as out:
        for miss in misses:
            out.write(json.dumps(miss, ensure_ascii=False) + "\n")
    kinds = Counter(m["kind"] for m in misses)
    tags = Counter(t for m in misses for g in m["gold"] if not g["found"] for t in g["tags"])
    lines = [
        f"# Misses on {set_name}: {len(misses)} of {probes} probes miss a gold turn in the top {TOP_K}",
        "",
        "Ranks are over the whole conversation (each path uncut, no threshold, each row's own score without",
        "its neighbours' context); the fused rank is the default configuration's (each path's top 20,",
        "thresholds and reply context as configured) without the cap of 8;",
        "`—`: the path scores the turn 0 (BM25) or ≤ 0 (cosine), or it never reaches fusion.",
        "",
        "| kind (first tag that applies) | misses | gold turns tagged |",
        "|---|---:|---:|",
    ]
    lines += [f"| {KIND_TEXT[k]} | {kinds.get(k, 0)} | {tags.get(k, 0)} |" for k in KINDS]
    lines.append("")
    for n, miss in enumerate(misses, start=1):
        lines += [
            f"## {n}. {miss['question']}",
            "",
            f"{miss['conv_id']} · **{miss['kind']}** — {miss['why']}",
        ]
        lines.append("")
        for gold in miss["gold"]:
            if gold["found"]:
                lines.append(f"- gold {gold['turn_id']} (found): {gold['text']}")
                continue
            lines.append(
                f"- gold {gold['turn_id']} ({gold.get('timestamp')}): {gold['text']}  \n"
                f"  BM25 words {_rank(gold['bm25_words'])} · BM25 original {_rank(gold['bm25_original'])}"
                f" · cosine {_rank(gold['cosine'])} · fused {gold['fused_rank'] or '—'}"
                f" · tags {', '.join(gold['tags'])}"
            )
        lines += ["", "Returned instead:", ""]
        for row in miss["above"]:
            paths = ", ".join(f"{p} {r}" for p, r in row["paths"].items())
            mark = " **(gold)**" if row["gold"] else ""
            lines.append(f"{row['rank']}. {row['text'][:200]}{mark} _({paths})_")
        lines.append("")
    (folder / f"{set_name}.md").write_text("\n".join(lines), encoding="utf-8")


class _Tee(io.StringIO):
    def __init__(self, stream: Any) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(text)
        return super().write(text)


@contextlib.contextmanager
def captured() -> Iterator[io.StringIO]:
    """What is printed inside, still printed and kept."""
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        yield tee


def _git(*args: str) -> str:
    try:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_results(printed: str, *, sets: list[str]) -> None:
    """docs/recall-results.md: the tables just printed, the per-language embedder table, and provenance."""
    commit = _git("rev-parse", "--short", "HEAD")
    # docs/ holds this file and the miss report, rewritten by the very run that measures.
    dirty = (
        " (with uncommitted changes)"
        if _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs")
        else ""
    )
    command = "NEKOMEM_SHARED_DATA=../shared/data .venv/bin/python bench/recall_eval.py --write-results"
    if list(sets) != list(shared_data.SETS):
        command += " --sets " + " ".join(sets)
    embedders = embedder_languages(sets)
    text = "\n".join(
        [
            "# Recall results",
            "",
            "Rewritten by `bench/recall_eval.py --write-results` (`make bench` runs it); not edited by hand.",
            "Development sets and protocol: `../shared/data/README.md`; the configurations:",
            "`recall/engine/configs.py`; the locale sets: `tests/fixtures/recall_sets/`.",
            "",
            f"- commit: `{commit}`{dirty}",
            f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
            f"- command: `{command}`",
            "",
            "## Every configuration on every set (recall@8 via `POST /query_memory`)",
            "",
            "```text",
            printed.strip(),
            "```",
            "",
            "## Embedders per language of the development sets (vectors only, `bench/embed_models.py`)",
            "",
            "Each turn ranked against its conversation by cosine alone (no BM25, no fusion, no threshold);",
            "`fused` is the mean of the two models' cosines (the `fused-muse-minilm` profile). zh sets:",
            "memorybank-cn, madial_bench-ch; en sets: locomo10, memorybank-en, madial_bench-en. Measured",
            "only; the default profile is unchanged.",
            "",
            embedders,
            "",
        ]
    )
    kept = "".join(f"\n{block}\n" for block in kept_sections())
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    RESULTS_FILE.write_text(text + kept, encoding="utf-8")
    print(f"wrote {RESULTS_FILE.relative_to(ROOT)}")


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- section {name}: begin -->", f"<!-- section {name}: end -->"


def kept_sections(path: Path = RESULTS_FILE) -> list[str]:
    """The sections other benches wrote into the results file (``write_section``), markers included."""
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    pattern = r"<!-- section (\S+): begin -->.*?<!-- section \1: end -->"
    return [m.group(0) for m in re.finditer(pattern, text, flags=re.S)]


def write_section(name: str, body: str, *, path: Path = RESULTS_FILE) -> None:
    """Puts ``body`` into the results file as section ``name``: in place of its last one, or at the end."""
    begin, end = _markers(name)
    block = f"{begin}\n{body.strip()}\n{end}"
    text = path.read_text(encoding="utf-8") if path.is_file() else "# Recall results\n"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), flags=re.S)
    text = (
        pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip("\n") + f"\n\n{block}\n"
    )
    path.write_text(text, encoding="utf-8")
    print(f"wrote section {name} of {path}")


LANGUAGE_OF = {
    "locomo10": "en",
    "memorybank-en": "en",
    "madial_bench-en": "en",
    "memorybank-cn": "zh",
    "madial_bench-ch": "zh",
}


def embedder_languages(sets: list[str]) -> str:
    """A markdown table: recall@8 of each profile per set and macro-averaged per language."""
    import numpy as np
    from django.conf import settings

    from bench.embed_models import MODELS, Scores, load_set, score
    from nekomem.embeddings import Embedder, EmbeddingUnavailable

    embedders = {}
    for name in MODELS:
        try:
            embedders[name] = Embedder.load(name, Path(settings.EMBEDDING_MODEL_DIR), threads=None)
        except EmbeddingUnavailable as exc:
            return f"(not measured: {name} unavailable: {exc})"
    profiles = [*MODELS, "fused"]
    per_set: dict[str, dict[str, float]] = {}
    for set_name in sets:
        scores = {p: Scores() for p in profiles}
        for conv in load_set(set_name, with_speaker=True).values():
            if not conv.probes:
                continue
            sims = {}
            for name, embedder in embedders.items():
                sims[name] = embedder.embed([q for q, _ in conv.probes]) @ embedder.embed(conv.texts).T
            sims["fused"] = (sims[MODELS[0]] + sims[MODELS[1]]) / 2
            for profile in profiles:
                score(sims[profile], conv, TOP_K, 0.0, scores[profile])
        per_set[set_name] = {p: float(np.mean(scores[p].recall)) for p in profiles}
    lines = ["| set | language | " + " | ".join(profiles) + " |", "|---|---|" + "---:|" * len(profiles)]
    for set_name, row in per_set.items():
        cells = " | ".join(f"{row[p]:.3f}" for p in profiles)
        lines.append(f"| {set_name} | {LANGUAGE_OF.get(set_name, '?')} | {cells} |")
    for language in ("zh", "en"):
        rows = [per_set[s] for s in per_set if LANGUAGE_OF.get(s) == language]
        if rows:
            cells = " | ".join(f"**{np.mean([r[p] for r in rows]):.3f}**" for p in profiles)
            lines.append(f"| mean of the {language} sets | {language} | {cells} |")
    return "\n".join(lines)
