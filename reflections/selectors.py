"""Reads of the reflections layer; every query is scoped to one character."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db.models import Count, FloatField, Func, Max, Q, QuerySet
from django.db.models.functions import Coalesce

from facts.models import FACT_SCHEMA_VERSION, Fact
from nekomem.embeddings import Embedder, decode_vector, text_fingerprint
from nekomem.journal.models import Event, Job
from nekomem.runtime.status import VectorCoverage
from nekomem.subjects import subject_rows
from reflections.evidence import Evidence, evidence_score
from reflections.models import REFLECTION_SCHEMA_VERSION, Reflection, SurfacedReflection
from reflections.services.records import ACTIVE_STATUSES, reflection_to_file_dict
from reflections.vector_cache import vector_cache_coverage, vector_cache_stale

MIN_SYNTHESIS_IMPORTANCE = 5


def reflection_list(
    *, character_id: int, status: str | None = None, archived: bool | None = None, subject: str = ""
) -> QuerySet[Reflection]:
    """``subject``: the browser's filter (``nekomem.subjects.subject_rows``); "" the master's only."""
    reflections = subject_rows(Reflection.with_subjects, subject).filter(character_id=character_id)
    if status:
        reflections = reflections.filter(status=status)
    if archived is not None:
        reflections = reflections.filter(archive_shard_path__isnull=not archived)
    return reflections.order_by("created_at", "pk")


def reflection_browse(
    *,
    character_id: int,
    status: str | None = None,
    archived: bool | None = None,
    query: str = "",
    subject: str = "",
) -> QuerySet[Reflection]:
    """The memory browser's list: newest first, filtered in the database (it must page 100k rows)."""
    reflections = reflection_list(
        character_id=character_id, status=status, archived=archived, subject=subject
    )
    if query:
        reflections = reflections.filter(Q(text__icontains=query) | Q(reflection_id=query))
    return reflections.order_by("-created_at", "-pk")


def source_fact_texts(*, character_id: int, fact_ids: Iterable[str]) -> dict[str, str]:
    """fact id → text of the given facts (archived ones included); ids no longer stored are left out."""
    wanted = set(fact_ids)
    if not wanted:
        return {}
    rows = Fact.objects.filter(character_id=character_id, fact_id__in=wanted).values_list("fact_id", "text")
    return dict(rows)


def surfaced_by_reflection(
    *, character_id: int, reflection_ids: Iterable[str]
) -> dict[str, list[SurfacedReflection]]:
    """Each reflection's surfaced history (when brought up, the feedback), oldest first."""
    history: dict[str, list[SurfacedReflection]] = {}
    rows = SurfacedReflection.objects.filter(
        character_id=character_id, reflection_id__in=set(reflection_ids)
    ).order_by("surfaced_at", "pk")
    for entry in rows:
        history.setdefault(entry.reflection_id, []).append(entry)
    return history


def reflection_get(*, character_id: int, reflection_id: str, subject_key: str = "") -> Reflection | None:
    """The master's reflection, or with ``subject_key`` that group-chat subject's."""
    return Reflection.with_subjects.filter(
        character_id=character_id, reflection_id=reflection_id, subject_key=subject_key
    ).first()


def reflections_in_file(*, character_id: int) -> QuerySet[Reflection]:
    """``reflections.json``: everything not moved into an archive shard, in insertion order; the
    file carries group-chat subjects' reflections too."""
    return Reflection.with_subjects.filter(
        character_id=character_id, archive_shard_path__isnull=True
    ).order_by("pk")


def reflections_in_shards(*, character_id: int) -> dict[str, list[Reflection]]:
    rows = Reflection.with_subjects.filter(
        character_id=character_id, archive_shard_path__isnull=False
    ).order_by("pk")
    shards: dict[str, list[Reflection]] = {}
    for reflection in rows:
        shards.setdefault(reflection.archive_shard_path or "", []).append(reflection)
    return shards


def surfaced_list(*, character_id: int) -> QuerySet[SurfacedReflection]:
    return SurfacedReflection.objects.filter(character_id=character_id).order_by("pk")


def surfaced_awaiting_feedback(*, character_id: int) -> list[SurfacedReflection]:
    return list(
        SurfacedReflection.objects.filter(
            character_id=character_id, feedback__isnull=True, handled=False
        ).order_by("pk")
    )


def synthesis_candidates(*, character_id: int, subject_key: str = "") -> list[Fact]:
    """Unabsorbed active facts of importance ≥ 5, by importance descending then age: the master's, or
    with ``subject_key`` one group-chat subject's (never mixed)."""
    return list(
        Fact.with_subjects.filter(
            character_id=character_id,
            subject_key=subject_key,
            absorbed=False,
            archived=False,
            importance__gte=MIN_SYNTHESIS_IMPORTANCE,
        ).order_by("-importance", "created_at", "pk")
    )


def subjects_with_synthesis_candidates(*, character_id: int, minimum: int) -> list[str]:
    """Keys of the subjects holding at least ``minimum`` synthesis candidates, in key order."""
    rows = (
        Fact.with_subjects.filter(
            character_id=character_id,
            absorbed=False,
            archived=False,
            importance__gte=MIN_SYNTHESIS_IMPORTANCE,
        )
        .exclude(subject_key="")
        .values("subject_key")
        .annotate(n=Count("pk"))
        .filter(n__gte=minimum)
        .order_by("subject_key")
    )
    return [row["subject_key"] for row in rows]


def absorbed_fact_vectors(
    *, character_id: int, embedder: Embedder, subject_key: str = ""
) -> list[tuple[str, str, object]]:
    """(fact id, text, vector) of absorbed facts, archive included, whose vector is valid now; the
    master's, or one subject's."""
    rows = Fact.with_subjects.filter(
        character_id=character_id,
        subject_key=subject_key,
        absorbed=True,
        embedding_model_id=embedder.model_id,
    ).values_list("fact_id", "text", "embedding", "embedding_text_sha256")
    out: list[tuple[str, str, object]] = []
    for fact_id, text, stored, sha in rows.iterator(chunk_size=2000):
        if sha != text_fingerprint(text):
            continue
        vector = decode_vector(stored, embedder.dim)
        if vector is not None:
            out.append((fact_id, text, vector))
    return out


FUNNEL_BUCKETS = (
    "synthesized",
    "surfaced",
    "evidence_updated",
    "confirmed",
    "promoted",
    "merged",
    "denied",
    "promote_blocked",
    "archived",
    "rebutted",
)


def reflection_funnel(*, character_id: int, since: datetime, until: datetime) -> dict[str, int]:
    """Counts of the evidence pipeline's transitions in [since, until], read from the event log."""
    counts: Counter[str] = Counter({bucket: 0 for bucket in FUNNEL_BUCKETS})
    events = Event.objects.filter(
        character_id=character_id, ts__gte=since, ts__lte=until, type__startswith="reflection."
    ).values_list("type", "payload")
    for event_type, payload in events.iterator(chunk_size=2000):
        if event_type == "reflection.synthesized":
            counts["synthesized"] += 1
        elif event_type == "reflection.surfaced":
            counts["surfaced"] += len(payload.get("reflection_ids") or [])
        elif event_type == "reflection.evidence_updated":
            counts["evidence_updated"] += 1
        elif event_type == "reflection.rebutted":
            counts["rebutted"] += 1
        elif event_type == "reflection.state_changed":
            target = payload.get("to")
            if payload.get("archive_shard_path"):
                counts["archived"] += 1
            elif target in counts and target != payload.get("from"):
                counts[target] += 1
    return {bucket: counts[bucket] for bucket in FUNNEL_BUCKETS}


# --- evidence read in bulk (hot paths: /followup_topics, /new_dialog) ---------------------------------


class AgeSeconds(Func):
    """Seconds from a timestamp column to ``now``, computed by the database (NULL stays NULL).

    The hot paths read hundreds of clocks per request; converting each stored timestamp into a Python
    datetime costs more than the rest of the request, while the score only needs the age.
    """

    output_field = FloatField()

    def __init__(self, expression: Any, *, now: datetime) -> None:
        super().__init__(expression)
        self.now = now

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        sql, params = compiler.compile(self.source_expressions[0])
        moment = self.now.astimezone(UTC).replace(tzinfo=None).isoformat(" ")
        return f"((julianday(%s) - julianday({sql})) * 86400.0)", (moment, *params)

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        sql, params = compiler.compile(self.source_expressions[0])
        return f"EXTRACT(EPOCH FROM (%s - {sql}))::float8", (self.now, *params)


@dataclass(frozen=True)
class ScoredRow:
    pk: int
    score: float
    values: tuple[Any, ...]  # the extra fields asked for, in order
    anchor_age_seconds: float | None = None


def _clock(age: float | None, now: datetime) -> datetime | None:
    return None if age is None else now - timedelta(seconds=age)


def reflections_scored(
    *,
    character_id: int,
    now: datetime,
    statuses: tuple[str, ...],
    fields: tuple[str, ...] = (),
    where: Q | None = None,
    **filters: Any,
) -> list[ScoredRow]:
    """Reflections with their evidence score at ``now`` (and the age of their time anchor), in pk order."""
    rows = (
        Reflection.objects.filter(where or Q(), character_id=character_id, status__in=statuses, **filters)
        .annotate(
            rein_age=AgeSeconds("rein_last_signal_at", now=now),
            disp_age=AgeSeconds("disp_last_signal_at", now=now),
            anchor_age=AgeSeconds(Coalesce("event_end_at", "event_start_at", "created_at"), now=now),
        )
        .order_by("pk")
        .values_list("pk", "reinforcement", "disputation", "rein_age", "disp_age", "anchor_age", *fields)
    )
    scored = []
    for pk, r, d, rein_age, disp_age, anchor_age, *values in rows:
        evidence = Evidence(
            reinforcement=r,
            disputation=d,
            rein_last_signal_at=_clock(rein_age, now),
            disp_last_signal_at=_clock(disp_age, now),
        )
        scored.append(
            ScoredRow(
                pk=pk,
                score=evidence_score(evidence, now=now),
                values=tuple(values),
                anchor_age_seconds=anchor_age,
            )
        )
    return scored


def reflection_event_seeds(character_id: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """The seeds event-log compaction writes for the reflections view (reference §2.14): each
    reflection as it stands, a ``reflection.synthesized`` snapshot that a replay inserts when missing."""
    for reflection in (
        Reflection.with_subjects.filter(character_id=character_id).order_by("pk").iterator(chunk_size=1000)
    ):
        yield "reflection.synthesized", reflection_to_file_dict(reflection)


# Reflections whose vector some reader uses: recall's pool (pending, confirmed) and the observation
# pool of Stage 2 and the keyword hook (confirmed, promoted).
VECTOR_STATUSES = (*ACTIVE_STATUSES, Reflection.Status.PROMOTED)


def reflections_needing_vectors(*, character_id: int, model_id: str, limit: int) -> list[tuple[int, str]]:
    """(pk, text) of the character's reflections the embedding backfill still has to embed, group-chat
    subjects' included (recall's pool holds them; only a scoped query returns them)."""
    rows = Reflection.with_subjects.filter(character_id=character_id, status__in=VECTOR_STATUSES)
    return vector_cache_stale(rows, model_id=model_id, limit=limit)


def characters_with_unvectored_reflections(*, model_id: str) -> list[int]:
    """Characters with a reflection lacking a vector of ``model_id`` (the SQL test; a rewritten text is
    caught by ``reflections_needing_vectors``)."""
    missing = Q(embedding="") | ~Q(embedding_model_id=model_id)
    rows = Reflection.with_subjects.filter(missing, status__in=VECTOR_STATUSES).exclude(text="")
    return list(rows.values_list("character_id", flat=True).distinct().order_by())


def reflection_vector_coverage(model_id: str) -> VectorCoverage:
    """The reflections the backfill embeds: with a vector of ``model_id``, and still without."""
    return vector_cache_coverage(
        Reflection.with_subjects.filter(status__in=VECTOR_STATUSES), model_id=model_id
    )


def reflections_of_subjects(*, character_id: int, subject_keys: list[str]) -> QuerySet[Reflection]:
    """A group-chat subject's reflections; the default manager never returns them."""
    return Reflection.with_subjects.filter(character_id=character_id, subject_key__in=subject_keys).order_by(
        "created_at", "pk"
    )


# --- the schema re-check (reflections.services.recheck) ------------------------------------------------


def v1_reflections(*, character_id: int) -> QuerySet[Reflection]:
    """The character's reflections of schema version 1 (every subject, archived ones too), oldest first."""
    return Reflection.with_subjects.filter(
        character_id=character_id, schema_version__lt=REFLECTION_SCHEMA_VERSION
    ).order_by("pk")


def v1_facts(*, character_id: int) -> QuerySet[Fact]:
    return Fact.with_subjects.filter(
        character_id=character_id, schema_version__lt=FACT_SCHEMA_VERSION
    ).order_by("pk")


def v1_entries_count(*, character_id: int) -> int:
    return v1_reflections(character_id=character_id).count() + v1_facts(character_id=character_id).count()


def recheck_characters_in_turn(*, job_kind: str) -> list[int]:
    """Characters with v1 entries, the one whose last re-check job (of ``job_kind``) is oldest, or
    that never had one, first: the loop's round robin, read from the database."""
    ids = set(
        Reflection.with_subjects.filter(schema_version__lt=REFLECTION_SCHEMA_VERSION)
        .values_list("character_id", flat=True)
        .distinct()
        .order_by()  # the model's ordering would make DISTINCT run over every row (with a join)
    )
    ids |= set(
        Fact.with_subjects.filter(schema_version__lt=FACT_SCHEMA_VERSION)
        .values_list("character_id", flat=True)
        .distinct()
        .order_by()
    )
    last = dict(
        Job.objects.filter(kind=job_kind, character_id__in=ids)
        .values("character_id")
        .annotate(at=Max("updated_at"))
        .values_list("character_id", "at")
    )
    never = datetime.min.replace(tzinfo=UTC)
    return sorted(ids, key=lambda cid: (last.get(cid) or never, cid))


def reflection_ids_live(character_id: int) -> list[str]:
    """The ids of the character's Reflection rows that exist (a group-chat subject's and archived ones
    included): compaction keeps their last versions in the journal (``register_live_rows``)."""
    return list(
        Reflection.with_subjects.filter(character_id=character_id).values_list("reflection_id", flat=True)
    )
