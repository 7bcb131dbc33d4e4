"""The observation pool that evidence signals target (reference §3.3.3): Stage 2 maps new user facts
onto it, the negative-keyword hook looks for what a user message denies.

The pool is confirmed and promoted reflections plus every non-protected persona entry. Reflections own
the loops, and must not import the persona layer (persona reads reflections, not the other way), so
each layer registers its part here from its AppConfig.ready(): how to read its observations and how
to apply a signal to one of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from nekomem.embeddings import Embedder
from reflections.evidence import Signal


@dataclass(frozen=True)
class Observation:
    prompt_id: str  # how the prompt names it: ``reflection.<id>``, ``persona.<entity>.<id>``
    text: str
    evidence_score: float
    vector: np.ndarray | None = None  # a unit vector of the current model, or None
    suppressed: bool = False


# (character_id, now, embedder) → the layer's observations.
ObservationReader = Callable[[int, datetime, Embedder | None], list[Observation]]
# (character_id, prompt_id, signal, source, now) → applied; runs inside the caller's transaction,
# under the character's lock. False when the observation left the pool meanwhile.
SignalApplier = Callable[[int, str, Signal, str, datetime], bool]


@dataclass(frozen=True)
class ObservationSource:
    prefix: str  # the prompt ids' first part: ``reflection``, ``persona``
    read: ObservationReader
    apply: SignalApplier


_sources: dict[str, ObservationSource] = {}


def register_observation_source(source: ObservationSource) -> None:
    _sources[source.prefix] = source


def observation_sources() -> list[ObservationSource]:
    return list(_sources.values())


def observation_signal_apply(
    *, character_id: int, prompt_id: str, signal: Signal, source: str, now: datetime
) -> bool:
    """Route one signal to the layer whose prompt id it names."""
    owner = _sources.get(prompt_id.split(".", 1)[0])
    return owner is not None and owner.apply(character_id, prompt_id, signal, source, now)
