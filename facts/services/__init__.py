"""Writes of the facts layer, split by sub-domain; import from here."""

from facts.prompts import language_of, render_dialogue
from facts.services.arbitration import dedup_pairs_arbitrate
from facts.services.archive import fact_archive, fact_restore, facts_archive_sweep, facts_mark_absorbed
from facts.services.dedup import PersistReport, dedup_pair_queue, facts_persist
from facts.services.editing import fact_delete, fact_update
from facts.services.extraction import (
    extraction_coverage_infer,
    extraction_coverage_set,
    facts_extract_turn,
    facts_extraction_tick,
    stage1_extract,
)
from facts.services.imported import ImportedFact, ImportedFacts, facts_import_append
from facts.services.recheck import fact_recheck_failed, fact_schema_rejudged, recheck_attempts
from facts.services.records import (
    FactDraft,
    clean_event_when,
    iso_local,
    normalize_entity,
    parse_iso,
    resolve_event_when,
)
from facts.services.scoped import (
    BatchSegment,
    ScopedExtractionFailed,
    ScopedFact,
    ScopedStored,
    facts_scoped_extract,
    facts_scoped_extract_batch,
    facts_scoped_store,
    facts_subject_forget,
)
from facts.services.signals import facts_mark_signal_processed
from facts.services.vectors import fact_vectors_drop_archived, fact_vectors_write

__all__ = [
    "BatchSegment",
    "FactDraft",
    "ImportedFact",
    "ImportedFacts",
    "PersistReport",
    "ScopedExtractionFailed",
    "ScopedFact",
    "ScopedStored",
    "clean_event_when",
    "dedup_pair_queue",
    "dedup_pairs_arbitrate",
    "extraction_coverage_infer",
    "extraction_coverage_set",
    "fact_archive",
    "fact_delete",
    "fact_recheck_failed",
    "fact_restore",
    "fact_schema_rejudged",
    "fact_update",
    "fact_vectors_drop_archived",
    "fact_vectors_write",
    "facts_archive_sweep",
    "facts_extract_turn",
    "facts_extraction_tick",
    "facts_import_append",
    "facts_mark_absorbed",
    "facts_mark_signal_processed",
    "facts_persist",
    "facts_scoped_extract",
    "facts_scoped_extract_batch",
    "facts_scoped_store",
    "facts_subject_forget",
    "iso_local",
    "language_of",
    "normalize_entity",
    "parse_iso",
    "recheck_attempts",
    "render_dialogue",
    "resolve_event_when",
    "stage1_extract",
]
