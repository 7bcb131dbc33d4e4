"""Edits from the API, the admin and the memory browser: text/importance/entity changes and deletion."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from facts.models import RECALL_POOL, Fact, FactDedupPair
from facts.services.records import fact_hash
from facts.services.scoped import scoped_fact_hash, subject_of_fact
from facts.services.tokens import fact_index_add, fact_index_forget
from nekomem.characters.locks import lock_character, lock_rows
from nekomem.characters.services import (
    Forgotten,
    character_memory_changed,
    character_memory_forgotten,
    memory_forgotten_apply,
)
from nekomem.journal.causes import caused_by
from nekomem.journal.redaction import events_redact


def fact_text_set(*, fact: Fact, text: str) -> None:
    """Rewrite a fact's text in memory; the stale vector is dropped so the backfill re-embeds it.

    The near-duplicate index entry goes too: call ``fact_index_add`` after saving (or leave it to the
    next store, which re-indexes unindexed rows).
    """
    fact.text = text
    fact.hash = fact_hash(text)
    fact_index_forget(fact)
    fact.embedding = ""
    fact.embedding_text_sha256 = ""
    fact.embedding_model_id = ""


def fact_update(
    *,
    character_id: int,
    fact_id: str,
    text: str | None = None,
    importance: int | None = None,
    entity: str | None = None,
    with_subjects: bool = False,
) -> Fact:
    """Edit one fact; raises Fact.DoesNotExist when it is not the character's, ValueError on a value
    out of range (nothing is changed then). ``with_subjects``: a group-chat subject's fact too (the
    memory browser); otherwise only the master's."""
    if importance is not None and not 1 <= importance <= 10:
        raise ValueError("importance must be between 1 and 10")
    if entity is not None and entity not in Fact.Entity.values:
        raise ValueError(f"entity must be one of {', '.join(Fact.Entity.values)}")
    if text is not None and not text.strip():
        raise ValueError("text must not be empty")
    with transaction.atomic():
        character = lock_character(character_id)
        manager = Fact.with_subjects if with_subjects else Fact.objects
        fact = lock_rows(manager.filter(character_id=character_id, fact_id=fact_id)).get()
        text_changed = text is not None and text != fact.text
        if text is not None and text_changed:
            fact_text_set(fact=fact, text=text)
            if fact.subject_key:  # a subject's hash is salted with its key and scope, as when stored
                fact.hash = scoped_fact_hash(subject=subject_of_fact(fact), text=text)
        if importance is not None:
            fact.importance = importance
        if entity is not None:
            fact.entity = entity
        fact.updated_at = timezone.now()
        fact.save()
        if text_changed:
            fact_index_add(fact=fact, stop_names=character.stop_names)
        character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=[fact.pk], held=[fact])
    return fact


@caused_by("forget")
def fact_delete(*, character_id: int, fact_id: str, with_subjects: bool = False) -> Forgotten | None:
    """Delete the fact and every copy of its text: its vector and near-duplicate tokens (on its row or
    cascaded), the arbitration records that copied it, then, before returning, this process's recall
    index and the saved snapshots (``memory_forgotten_apply``). None when there is no such fact.
    ``with_subjects``: a group-chat subject's fact too (the memory browser)."""
    manager = Fact.with_subjects if with_subjects else Fact.objects
    with transaction.atomic():
        lock_character(character_id)
        found = list(manager.filter(character_id=character_id, fact_id=fact_id).values_list("pk", "text"))
        if not found:
            return None
        doomed = [pk for pk, _ in found]
        # ``fact.added`` carries the fact as its file entry: the event stays (replay), its text goes.
        events = events_redact(
            character_id=character_id, texts=[text for _, text in found], match=Q(payload__id=fact_id)
        )
        vectors = manager.filter(pk__in=doomed).exclude(embedding="").count()
        # Arbitration records stay (a pending pair closes as "fact_gone"), without this fact's text.
        texts = [text for _, text in found]
        pairs = FactDedupPair.objects.filter(character_id=character_id)
        blanked = pairs.filter(Q(candidate_id__in=doomed) | Q(candidate_fact_id=fact_id)).update(
            candidate_text=""
        )
        blanked += pairs.filter(Q(existing_id__in=doomed) | Q(existing_fact_id=fact_id)).update(
            existing_text=""
        )
        blanked += pairs.filter(merged_text__in=texts).update(merged_text="")
        deleted = manager.filter(pk__in=doomed).delete()[1].get(Fact._meta.label, 0)
        character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=doomed)
        character_memory_forgotten(character_id=character_id)
    return memory_forgotten_apply(
        character_id=character_id,
        rows={"facts": deleted, "vectors": vectors, "dedup_records": blanked, "journal_texts": events},
    )
