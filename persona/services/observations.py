"""Persona entries in the observation pool of evidence signals (reference §3.3.3): every live,
non-protected entry, named ``persona.<entity>.<entry id>`` in the prompt. Card entries are the
character card's and take no signals."""

from __future__ import annotations

from datetime import datetime

from nekomem.characters.services import character_memory_changed
from nekomem.embeddings import Embedder
from persona.models import CHANGE_POOL, PersonaEntry
from persona.services.entries import entry_evidence_event
from persona.services.mentions import suppression_active
from reflections.services import Observation, Signal, evidence_apply

PREFIX = "persona"


def _prompt_id(entry: PersonaEntry) -> str:
    return f"{PREFIX}.{entry.section}.{entry.entry_id}"


def _live(character_id: int):  # type: ignore[no-untyped-def]
    return PersonaEntry.objects.filter(
        character_id=character_id, protected=False, archive_shard_path__isnull=True
    )


def persona_observations(character_id: int, now: datetime, embedder: Embedder | None) -> list[Observation]:
    observations = []
    for entry in _live(character_id).order_by("section", "position", "pk"):
        observations.append(
            Observation(
                prompt_id=_prompt_id(entry),
                text=entry.text,
                evidence_score=entry.score(now=now),
                vector=entry.cached_vector(embedder),
                suppressed=suppression_active(entry, now=now),
            )
        )
    return observations


def persona_observation_signal(
    character_id: int, prompt_id: str, signal: Signal, source: str, now: datetime
) -> bool:
    """One evidence signal on the entry ``prompt_id`` names, with its ``persona.evidence_updated``
    event; inside the caller's locked transaction."""
    entry_id = prompt_id.rsplit(".", 1)[-1]
    entry = _live(character_id).filter(entry_id=entry_id).first()
    if entry is None or _prompt_id(entry) != prompt_id:
        return False
    entry.evidence_assign(evidence_apply(entry.evidence(), signal, now=now))
    entry.save()
    entry_evidence_event(entry, source=source)
    character_memory_changed(character_id=character_id, pool=CHANGE_POOL, rows=[entry.pk])
    return True
