"""``facts.json``, ``facts_archive.json`` and ``facts_pending_dedup.json`` for the import/export
commands (reference §2.4–2.6).

Import keeps facts exactly as the files hold them (ids, hashes, times, flags; no LLM dedup): only
the same ``id`` is merged, with the original's rule that one-way flags already set are never
cleared. A fact found in both files is archived, as the original's readers merge by id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db.models import Count, Max
from django.utils import timezone

from facts.models import RECALL_POOL, Fact, FactDedupPair, FactToken
from facts.selectors import dedup_pairs_for_export
from facts.services.extraction import extraction_coverage_infer
from facts.services.records import (
    EMBEDDING_KEYS,
    FILE_KEYS,
    fact_from_file_dict,
    fact_to_file_dict,
    iso_local,
    parse_iso,
)
from facts.services.tokens import (
    dedup_index_defer,
    fact_index_forget,
    facts_index_rows_write,
    facts_tokenize,
)
from nekomem.characters.models import Character
from nekomem.portability import (
    UNBOUND_CHARACTER,
    FileHandler,
    ImportResult,
    MalformedFile,
    progress,
    read_json,
    register_file_handler,
    write_records,
)
from nekomem.statements import instances_insert

BATCH = 2000
INDEX_NOW_MAX = 2000  # facts an import indexes itself; past this a job indexes them after it returns
# Compared to decide whether a re-imported entry changes anything (idempotent import).
_FIELDS = (*(key for key in FILE_KEYS if key != "id"), "archived", *EMBEDDING_KEYS, "extra", "subject_key")
_ONE_WAY = ("absorbed", "signal_processed", "archived")


def _parse(path: Path, *, archived: bool) -> dict[str, Fact]:
    """Every entry parsed before anything is written; the first bad one refuses the whole file."""
    data = read_json(path)
    if not isinstance(data, list):
        raise MalformedFile(path, f"expected a JSON list of facts, got {type(data).__name__}")
    parsed: dict[str, Fact] = {}
    for index, entry in enumerate(progress(data, total=len(data), desc=f"parse {path.name}")):
        try:
            fact = fact_from_file_dict(entry, character_id=UNBOUND_CHARACTER, archived=archived)
        except (ValueError, TypeError) as exc:
            label = entry.get("id") if isinstance(entry, dict) else None
            raise MalformedFile(path, str(exc), entry=f"#{index}" + (f" ({label})" if label else "")) from exc
        previous = parsed.get(fact.fact_id)
        if previous is not None:
            _keep_one_way(fact, previous)
        parsed[fact.fact_id] = fact
    return parsed


def _keep_one_way(fact: Fact, before: Fact) -> None:
    for name in _ONE_WAY:
        setattr(fact, name, getattr(fact, name) or getattr(before, name))


def _existing(*, character_id: int, fact_ids: list[str]) -> dict[str, Fact]:
    facts = Fact.with_subjects.filter(character_id=character_id)
    # A long IN list is slower (and hits SQLite's variable limit) than reading the whole character.
    if len(fact_ids) <= 900:
        facts = facts.filter(fact_id__in=fact_ids)
    return {f.fact_id: f for f in facts.iterator(chunk_size=BATCH)}


def _write(character: Character, incoming: dict[str, Fact], *, label: str) -> ImportResult:
    now = timezone.now()
    existing = _existing(character_id=character.pk, fact_ids=list(incoming))
    new: list[Fact] = []
    changed: list[Fact] = []
    retokenize: list[Fact] = []
    unchanged = 0
    for fact_id, fact in incoming.items():
        fact.character_id = character.pk
        current = existing.get(fact_id)
        if current is None:
            fact.archived_at = now if fact.archived else None
            new.append(fact)
            continue
        _keep_one_way(fact, current)
        if all(getattr(fact, name) == getattr(current, name) for name in _FIELDS):
            unchanged += 1
            continue
        if fact.text != current.text:
            retokenize.append(current)
        for name in _FIELDS:
            setattr(current, name, getattr(fact, name))
        current.archived_at = current.archived_at or (now if current.archived else None)
        current.updated_at = now
        changed.append(current)
    # The near-duplicate index: a few facts are indexed here; more are left to a job after the import
    # returns (their index rows were half of a 100k import), and a store before it is done indexes
    # what is left itself (facts.services.tokens).
    index_now = len(new) + len(retokenize) <= INDEX_NOW_MAX
    if index_now:
        stop_names = character.stop_names
        facts_tokenize(progress(new, total=len(new), desc=f"index {label}"), stop_names=stop_names)
        facts_tokenize(retokenize, stop_names=stop_names)
    else:
        for fact in retokenize:
            fact_index_forget(fact)
    instances_insert(Fact, new)
    if new:  # the index rows need the new primary keys
        known = Fact.with_subjects.filter(character_id=character.pk)
        if len(new) <= 900:  # a few new facts in a large character: not every key of it
            known = known.filter(fact_id__in=[f.fact_id for f in new])
        pks = dict(known.values_list("fact_id", "pk"))
        for fact in new:
            fact.pk = pks[fact.fact_id]
    Fact.with_subjects.bulk_update(
        changed, [*_FIELDS, "archived_at", "updated_at", "dedup_tokens", "dedup_key"], batch_size=BATCH
    )
    for i in range(0, len(retokenize), 900):
        FactToken.objects.filter(fact__in=[f.pk for f in retokenize[i : i + 900]]).delete()
    if index_now:
        facts_index_rows_write(character_id=character.pk, facts=[*new, *retokenize])
    else:
        dedup_index_defer(character_id=character.pk)
    if new:
        extraction_coverage_infer(character_id=character.pk)
    # The rows written, so recall caches apply just these (an archived fact leaves the live pool).
    written = frozenset(f.pk for f in [*new, *changed])
    return ImportResult(
        created=len(new), updated=len(changed), unchanged=unchanged, pool=RECALL_POOL, rows=written
    )


def _export(character: Character, path: Path, *, archived: bool) -> int | None:
    facts = Fact.with_subjects.filter(character_id=character.pk, archived=archived).order_by("pk")
    total = facts.count()
    # pk order is insertion order, so an imported file comes back in its own order.
    records: list[dict[str, Any]] = [
        fact_to_file_dict(f) for f in progress(facts.iterator(chunk_size=BATCH), total=total, desc=path.name)
    ]
    return write_records(path, records)


def _stamp(character: Character, *, archived: bool) -> tuple[object, ...]:
    """Changes whenever the file's export would: every write of a fact stamps ``updated_at``."""
    rows = Fact.with_subjects.filter(character_id=character.pk, archived=archived)
    found = rows.aggregate(count=Count("pk"), last=Max("pk"), changed=Max("updated_at"))
    return (found["count"], found["last"], found["changed"].isoformat() if found["changed"] else None)


register_file_handler(
    FileHandler(
        filename="facts.json",
        order=30,
        read=lambda p: _parse(p, archived=False),
        write=lambda c, facts: _write(c, facts, label="facts.json"),
        export=lambda c, p: _export(c, p, archived=False),
        stamp=lambda c: _stamp(c, archived=False),
    )
)
register_file_handler(
    FileHandler(
        filename="facts_archive.json",
        order=31,
        read=lambda p: _parse(p, archived=True),
        write=lambda c, facts: _write(c, facts, label="facts_archive.json"),
        export=lambda c, p: _export(c, p, archived=True),
        stamp=lambda c: _stamp(c, archived=True),
    )
)


# --- facts_pending_dedup.json (reference §2.6) ---------------------------------------------------------

PAIR_KEYS = (
    "candidate_id",
    "existing_id",
    "candidate_text",
    "existing_text",
    "entity",
    "subject_key",
    "scope",
    "cosine",
    "queued_at",
)
# Compared to decide whether a re-imported pending pair changes anything.
_PAIR_FIELDS = ("candidate_text", "existing_text", "entity", "subject_key", "scope", "cosine", "queued_at")


def pair_to_file_dict(pair: FactDedupPair) -> dict[str, Any]:
    return {
        "candidate_id": pair.candidate_fact_id,
        "existing_id": pair.existing_fact_id,
        "candidate_text": pair.candidate_text,
        "existing_text": pair.existing_text,
        "entity": pair.entity,
        "subject_key": pair.subject_key,
        "scope": pair.scope,
        "cosine": pair.cosine,
        "queued_at": iso_local(pair.queued_at),
    }


def _pair_from_file_dict(entry: Any) -> FactDedupPair:
    """An unsaved pending pair (fact keys not yet resolved); raises ValueError naming the bad field."""
    if not isinstance(entry, dict):
        raise ValueError(f"expected an object, got {type(entry).__name__}")
    for key in ("candidate_id", "existing_id"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise ValueError(f"missing or non-string {key!r}")
    if entry["candidate_id"] == entry["existing_id"]:
        raise ValueError("'candidate_id' and 'existing_id' are the same fact")
    for key in ("candidate_text", "existing_text", "entity"):
        if not isinstance(entry.get(key), str):
            raise ValueError(f"missing or non-string {key!r}")
    for key in ("subject_key", "scope"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            raise ValueError(f"{key!r} must be a string or null")
    cosine = entry.get("cosine")
    if cosine is not None and (isinstance(cosine, bool) or not isinstance(cosine, int | float)):
        raise ValueError("'cosine' must be a number or null")
    queued_at = parse_iso(entry.get("queued_at"))
    if queued_at is None:
        raise ValueError("missing 'queued_at'")
    return FactDedupPair(
        character_id=UNBOUND_CHARACTER,
        candidate_fact_id=entry["candidate_id"],
        existing_fact_id=entry["existing_id"],
        candidate_text=entry["candidate_text"],
        existing_text=entry["existing_text"],
        entity=entry["entity"],
        subject_key=entry.get("subject_key"),
        scope=entry.get("scope"),
        cosine=None if cosine is None else float(cosine),
        queued_at=queued_at,
        status=FactDedupPair.Status.PENDING,
    )


def _pair_key(candidate_id: str, existing_id: str) -> frozenset[str]:
    # Either direction is the same pair, as for dedup_pair_queue.
    return frozenset((candidate_id, existing_id))


def _parse_pairs(path: Path) -> dict[frozenset[str], FactDedupPair]:
    data = read_json(path)
    if not isinstance(data, list):
        raise MalformedFile(path, f"expected a JSON list of pairs, got {type(data).__name__}")
    parsed: dict[frozenset[str], FactDedupPair] = {}
    for index, entry in enumerate(data):
        try:
            pair = _pair_from_file_dict(entry)
        except (ValueError, TypeError) as exc:
            label = None
            if isinstance(entry, dict) and isinstance(entry.get("candidate_id"), str):
                label = f"{entry['candidate_id']}~{entry.get('existing_id')}"
            raise MalformedFile(path, str(exc), entry=f"#{index}" + (f" ({label})" if label else "")) from exc
        parsed.setdefault(_pair_key(pair.candidate_fact_id, pair.existing_fact_id), pair)
    return parsed


def _write_pairs(character: Character, incoming: dict[frozenset[str], FactDedupPair]) -> ImportResult:
    """Pending pairs only. A pair already known (either direction, any status) is not re-queued: a
    decided pair stays decided; a pending one takes the file's values. A fact id the character does not
    hold leaves that side's key null, and arbitration closes the pair as ``fact_gone``."""
    unchanged = 0
    fact_ids = {fid for pair in incoming.values() for fid in (pair.candidate_fact_id, pair.existing_fact_id)}
    rows = Fact.with_subjects.filter(character_id=character.pk, fact_id__in=fact_ids)
    pks = dict(rows.values_list("fact_id", "pk"))
    known = {
        _pair_key(p.candidate_fact_id, p.existing_fact_id): p
        for p in FactDedupPair.objects.filter(character_id=character.pk)
    }
    new: list[FactDedupPair] = []
    changed: list[FactDedupPair] = []
    for key, pair in incoming.items():
        current = known.get(key)
        if current is None:
            pair.character_id = character.pk
            pair.candidate_id = pks.get(pair.candidate_fact_id)
            pair.existing_id = pks.get(pair.existing_fact_id)
            new.append(pair)
        elif current.status != FactDedupPair.Status.PENDING or all(
            getattr(current, name) == getattr(pair, name) for name in _PAIR_FIELDS
        ):
            unchanged += 1
        else:
            for name in _PAIR_FIELDS:
                setattr(current, name, getattr(pair, name))
            changed.append(current)
    FactDedupPair.objects.bulk_create(new, batch_size=BATCH)
    FactDedupPair.objects.bulk_update(changed, list(_PAIR_FIELDS), batch_size=BATCH)
    return ImportResult(created=len(new), updated=len(changed), unchanged=unchanged)


def _export_pairs(character: Character, path: Path) -> int | None:
    return write_records(
        path, [pair_to_file_dict(p) for p in dedup_pairs_for_export(character_id=character.pk)]
    )


register_file_handler(
    FileHandler(
        filename="facts_pending_dedup.json",
        order=32,
        read=_parse_pairs,
        write=_write_pairs,
        export=_export_pairs,
    )
)
