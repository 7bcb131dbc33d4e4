"""Writes of the persona layer, split by sub-domain; import from here."""

from persona.services.archive import (
    MemoryArchiveReport,
    memory_archive_sweep,
    persona_archive_sweep,
    persona_entry_restore,
)
from persona.services.corrections import persona_correction_resolve, persona_corrections_resolve
from persona.services.editing import persona_entry_create, persona_entry_delete, persona_entry_edit
from persona.services.entries import (
    AddOutcome,
    persona_ensure,
    persona_ensure_current,
    persona_prepared_early,
)
from persona.services.imported import FusionInputTooLarge, fusion_input_check, persona_import_fuse
from persona.services.mentions import persona_mentions_record, suppressions_refresh
from persona.services.promotion import persona_promote_tick, reflection_promote
from persona.services.refine import persona_refine
from persona.services.scoped import persona_subject_display_name_set, persona_subject_forget
from persona.services.switch import powerful_memory_set, reflections_reset_confirmed_at
from persona.services.vectors import persona_entry_vectors_write

__all__ = [
    "AddOutcome",
    "FusionInputTooLarge",
    "MemoryArchiveReport",
    "fusion_input_check",
    "memory_archive_sweep",
    "persona_archive_sweep",
    "persona_correction_resolve",
    "persona_corrections_resolve",
    "persona_ensure",
    "persona_ensure_current",
    "persona_entry_create",
    "persona_entry_delete",
    "persona_entry_edit",
    "persona_entry_restore",
    "persona_entry_vectors_write",
    "persona_import_fuse",
    "persona_mentions_record",
    "persona_prepared_early",
    "persona_promote_tick",
    "persona_refine",
    "persona_subject_display_name_set",
    "persona_subject_forget",
    "powerful_memory_set",
    "reflection_promote",
    "reflections_reset_confirmed_at",
    "suppressions_refresh",
]
