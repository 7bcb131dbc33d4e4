"""Identity administration that reaches a layer's rows (reference §1.6): forgetting an entity in every
character, reconciling the ledger from stored facts, and the rows an unbind leaves behind. The
ledger itself is ``groupchat.identity``'s."""

from __future__ import annotations

from dataclasses import dataclass, field

from facts.selectors import fact_speaker_ids, facts_spoken_by_count
from groupchat.identity.selectors import entity_accounts
from groupchat.identity.services import accounts_reconcile, entity_forget
from groupchat.identity.trust import account_platform
from groupchat.models import SubjectRecord
from groupchat.services.scoped import scoped_forget
from nekomem.characters.selectors import character_list
from nekomem.subjects import Subject


def _account_subjects(*, character_id: int, account_id: str) -> list[Subject]:
    """Every subject of one account in one character: its participant, and its member subjects in
    each group the character knows it from."""
    platform, actor = account_id.split(":", 1)
    participant = Subject(kind="participant", subject_id=account_id, scope=f"participant:{account_id}")
    members = SubjectRecord.objects.filter(
        character_id=character_id,
        subject_kind="group_participant",
        subject_id__startswith=f"{platform}:",
        subject_id__endswith=f":{actor}",
    ).values_list("subject_id", "scope")
    subjects = [participant]
    for subject_id, scope in members:
        if subject_id.count(":") >= 2:
            subjects.append(Subject(kind="group_participant", subject_id=subject_id, scope=scope))
    return subjects


@dataclass
class EntityForgotten:
    accounts: list[str]
    characters: int = 0
    forgotten_subjects: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def identity_entity_forget(*, entity_id: str) -> EntityForgotten:
    """Erase a person: every subject of each of their accounts in every character (through the one
    forget path, so indexes, vectors and snapshots lose them too), then their ledger rows."""
    accounts = list(entity_accounts(entity_id=entity_id).values_list("account_id", flat=True))
    report = EntityForgotten(accounts=accounts)
    for character in character_list():
        touched = False
        for account_id in accounts:
            for subject in _account_subjects(character_id=character.pk, account_id=account_id):
                forgotten = scoped_forget(character_id=character.pk, subject=subject)
                for key in forgotten.forgotten_subjects:
                    if key not in report.forgotten_subjects:
                        report.forgotten_subjects.append(key)
                for name, count in forgotten.counts.items():
                    if name != "linked_accounts" and count:
                        report.counts[name] = report.counts.get(name, 0) + count
                        touched = True
        report.characters += touched
    entity_forget(entity_id=entity_id)
    return report


def identity_reconcile_from_facts() -> dict[str, int]:
    """Recreate ledger rows for the speakers stored facts carry (a disaster-recovery tool)."""
    seen: set[str] = set()
    for character in character_list():
        seen |= fact_speaker_ids(character_id=character.pk)
    return accounts_reconcile(account_ids=seen)


def identity_stranded_rows(*, account_id: str) -> int:
    """Facts the account said that stay under its former entity's subjects after an unbind."""
    own = [f"participant:{account_id}"]
    platform = account_platform(account_id)
    total = 0
    for character in character_list():
        mine = own + [
            s.key
            for s in _account_subjects(character_id=character.pk, account_id=account_id)
            if s.kind == "group_participant" and s.platform == platform
        ]
        total += facts_spoken_by_count(
            character_id=character.pk, speaker_id=account_id, excluding_subject_keys=mine
        )
    return total
