from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import timedelta

from django.apps import apps
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from nekomem.characters.models import Character, CharacterRelease, MemoryChange
from nekomem.pages import values_in_pages


def character_get(*, name: str) -> Character | None:
    return Character.objects.filter(name=name).first()


# A release that has held its name this long is a crashed one: its row no longer fences anything.
RELEASE_HOLD_STALE = timedelta(minutes=5)


def character_release_in_progress(*, name: str) -> bool:
    """Whether ``/release_character`` holds this name now (in any worker)."""
    fresh = timezone.now() - RELEASE_HOLD_STALE
    return CharacterRelease.objects.filter(name=name, started_at__gt=fresh).exists()


def character_list() -> QuerySet[Character]:
    return Character.objects.order_by("name")


# The change log's two readings: its rows since a version (recall applies them), and whether a
# stretch of it touched some pools (a cache of what those pools render). Both share its rule: a bump
# without a pool, or a version missing from the log (pruned), means "anything may have changed".
_LOG_PAGE = 5000


def character_memory_touched(*, character_id: int, after: int, through: int, pools: Collection[str]) -> bool:
    """Whether a ``memory_version`` bump in ``after < version <= through`` may have changed a row of
    ``pools`` (more than its vector), in one aggregate read of the change log.

    A bump without a pool (the writer did not say what changed) or a stretch of the log already
    pruned counts as touching every pool: the caller cannot know, so it must re-read.
    """
    if through <= after:
        return False
    logged = MemoryChange.objects.filter(
        character_id=character_id, version__gt=after, version__lte=through
    ).aggregate(
        versions=Count("version", distinct=True),
        newest=Max("version"),
        touching=Count("pk", filter=Q(pool="") | Q(pool__in=list(pools), vector_only=False)),
    )
    complete = logged["versions"] == through - after and logged["newest"] == through
    return not complete or logged["touching"] > 0


@dataclass(frozen=True)
class MemoryChanges:
    """The logged changes after a version: which rows of which pool, and up to which version."""

    through: int  # the last version read (the caller's position afterwards)
    complete: bool  # False: a bump without detail or a pruned stretch of the log; only a rebuild is safe
    rows: dict[str, set[int]]  # pool → keys whose row changed (or went)
    vectors: dict[str, set[int]]  # pool → keys whose vector alone changed


def memory_changes_since(*, character_id: int, version: int) -> MemoryChanges:
    """The memory-change log of one character after ``version`` (one indexed range read)."""
    rows: dict[str, set[int]] = {}
    vectors: dict[str, set[int]] = {}
    seen: set[int] = set()
    complete = True
    for _pk, at, pool, key, vector_only in values_in_pages(
        MemoryChange.objects.filter(character_id=character_id, version__gt=version)
        .order_by("pk")
        .values_list("pk", "version", "pool", "row", "vector_only"),
        size=_LOG_PAGE,
    ):
        seen.add(at)
        if not pool:
            complete = False
        elif key is not None:
            (vectors if vector_only else rows).setdefault(pool, set()).add(key)
    through = max(seen, default=version)
    # Every bump logs at least one row, so a missing version means the log was pruned there.
    complete = complete and len(seen) == through - version
    return MemoryChanges(through=through, complete=complete, rows=rows, vectors=vectors)


@dataclass(frozen=True)
class RowCount:
    what: str  # the model's name, e.g. "fact"
    rows: int


@dataclass(frozen=True)
class LayerFootprint:
    layer: str  # the app's label, e.g. "facts"
    title: str  # its verbose name
    counts: list[RowCount]

    @property
    def rows(self) -> int:
        return sum(c.rows for c in self.counts)


@dataclass(frozen=True)
class CharacterFootprint:
    layers: list[LayerFootprint]

    @property
    def total(self) -> int:
        return sum(layer.rows for layer in self.layers)

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {layer.layer: {c.what: c.rows for c in layer.counts} for layer in self.layers}


def character_footprint(*, character_id: int) -> CharacterFootprint:
    """Every row that belongs to the character, counted per app and model (what a delete removes).

    Found through the models' foreign keys to Character, so a layer's new table is counted without
    this module knowing it (bookkeeping kept behind a hidden relation, like MemoryChange, is not).
    """
    layers: dict[str, list[RowCount]] = {}
    for relation in Character._meta.related_objects:
        model = relation.related_model
        if not isinstance(model, type) or relation.many_to_many:
            continue
        rows = model._default_manager.filter(**{relation.field.name: character_id}).count()
        if rows:
            layers.setdefault(model._meta.app_label, []).append(
                RowCount(what=str(model._meta.verbose_name), rows=rows)
            )
    return CharacterFootprint(
        layers=[
            LayerFootprint(layer=label, title=str(apps.get_app_config(label).verbose_name), counts=counts)
            for label, counts in sorted(layers.items(), key=lambda item: _layer_order(item[0]))
        ]
    )


_ORDER = ("recent", "facts", "reflections", "persona", "recall", "groupchat", "journal")


def _layer_order(label: str) -> tuple[int, str]:
    return (_ORDER.index(label) if label in _ORDER else len(_ORDER), label)
