"""Writes of the reflections layer, split by sub-domain; import from here.

Also the evidence-bearing item's pure pieces that persona entries share with reflections (evidence
math, observation sources, the refine pass, the vector cache writer): persona reads them here.
"""

from reflections.evidence import (
    ARCHIVE_AFTER_SUB_ZERO_DAYS,
    PROMOTED_AT,
    Evidence,
    Signal,
    evidence_apply,
    evidence_merged,
    sub_zero_day_counted,
)
from reflections.observations import Observation, ObservationSource, register_observation_source
from reflections.refine import Cluster, RefineAction, RefineGroup, RefineItem, RefineReport, refine_pass
from reflections.services.archive import (
    reflection_archive,
    reflection_restore,
    reflections_archive_sweep,
)
from reflections.services.editing import reflection_delete, reflection_edit
from reflections.services.lifecycle import (
    reflection_confirm,
    reflection_deny,
    reflection_transition,
    reflections_auto_promote,
    reflections_evidence_seed,
    surfaced_mark_handled,
)
from reflections.services.recheck import RecheckReport, schema_recheck_character, schema_recheck_tick
from reflections.services.refine import reflections_refine
from reflections.services.scoped import reflections_subject_forget
from reflections.services.signals import (
    reflections_keyword_hook,
    reflections_rebuttal_tick,
    reflections_stage2,
)
from reflections.services.surfacing import (
    followup_topics,
    reflections_feedback_check,
    reflections_record_surfaced,
)
from reflections.services.synthesis import (
    SynthesisResult,
    reflection_synthesize,
    reflections_subjects_synthesize,
)
from reflections.services.vectors import reflection_vectors_write
from reflections.vector_cache import VectorRow, vector_cache_write

__all__ = [
    "ARCHIVE_AFTER_SUB_ZERO_DAYS",
    "PROMOTED_AT",
    "Cluster",
    "Evidence",
    "Observation",
    "ObservationSource",
    "RecheckReport",
    "RefineAction",
    "RefineGroup",
    "RefineItem",
    "RefineReport",
    "Signal",
    "SynthesisResult",
    "VectorRow",
    "evidence_apply",
    "evidence_merged",
    "followup_topics",
    "refine_pass",
    "reflection_archive",
    "reflection_confirm",
    "reflection_delete",
    "reflection_deny",
    "reflection_edit",
    "reflection_restore",
    "reflection_synthesize",
    "reflection_transition",
    "reflection_vectors_write",
    "reflections_archive_sweep",
    "reflections_auto_promote",
    "reflections_evidence_seed",
    "reflections_feedback_check",
    "reflections_keyword_hook",
    "reflections_rebuttal_tick",
    "reflections_record_surfaced",
    "reflections_refine",
    "reflections_stage2",
    "reflections_subject_forget",
    "reflections_subjects_synthesize",
    "register_observation_source",
    "schema_recheck_character",
    "schema_recheck_tick",
    "sub_zero_day_counted",
    "surfaced_mark_handled",
    "vector_cache_write",
]
