"""Keep the Character rows in step with the install's ``characters.json`` (reference §12).

Checked before every request (one stat); when the file changed, every character of ``猫娘`` exists
and carries its card and the master's name, and the layers' card hooks run (persona mirrors the card
into its protected entries). Nothing is ever deleted: a character that left the file stays, with its
memory, and the status view lists it as vanished until the user deletes or renames it. A rename in the
main server (one name gone and one new name in the same edit, the new one unknown here) renames the
stored character, so its memory follows, as ``/release_character`` + rename does.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db import transaction

from install import install_config_dir
from install.characters import InstallCharacters, character_card, parse_characters
from install.files import FileState, WatchedJsonFile
from install.folder import install_folder_status
from install.switches import core_config_state
from nekomem.characters.models import Character
from nekomem.characters.names import InvalidCharacterName, validate_character_name
from nekomem.characters.services import (
    CharacterNameTaken,
    CharacterNotFound,
    character_get_or_create,
    character_rename,
)

logger = logging.getLogger(__name__)

CHARACTERS_FILE = "characters.json"
FIELD_ORDER_KEY = "_field_order"  # persona reads it: jsonb keeps no key order

# Called with a character's id after its card or master's name changed (persona mirrors the card).
CardHook = Callable[[int], None]
_card_hooks: dict[str, CardHook] = {}


def register_card_hook(name: str, hook: CardHook) -> None:
    _card_hooks[name] = hook


@dataclass(frozen=True)
class CharactersSync:
    """What this process last applied from ``characters.json``."""

    generation: int
    characters: list[str]
    invalid_names: list[str]
    changed: list[str]
    renamed: dict[str, str]  # old name → new name


_watch_lock = threading.Lock()
_sync_lock = threading.Lock()
_watch: WatchedJsonFile | None = None
_applied_generation = 0
_last_sync: CharactersSync | None = None


def _characters_watch() -> WatchedJsonFile | None:
    global _watch, _applied_generation
    config = install_config_dir()
    if config is None:
        return None
    path = config / CHARACTERS_FILE
    if _watch is None or _watch.path != path:
        with _watch_lock:
            if _watch is None or _watch.path != path:
                _watch = WatchedJsonFile(path)
                _applied_generation = 0  # generations count per watched file
    return _watch


def characters_file_state() -> FileState | None:
    watch = _characters_watch()
    return watch.state() if watch is not None else None


def stored_card(install: InstallCharacters, name: str) -> dict[str, Any]:
    card: dict[str, Any] = character_card(install, name)
    if card:
        card[FIELD_ORDER_KEY] = {entity: list(fields) for entity, fields in card.items()}
    return card


def _rename_of(previous: list[str] | None, install: InstallCharacters) -> tuple[str, str] | None:
    """One name gone and one new name in the same edit of the file: the original's rename (it writes
    the file once per rename). Anything else (two changes at once, a first reading) is no rename."""
    if previous is None:
        return None
    gone = [name for name in previous if name not in install.cards]
    added = [name for name in install.cards if name not in previous]
    return (gone[0], added[0]) if len(gone) == 1 and len(added) == 1 else None


def _follow_rename(old: str, new: str) -> bool:
    """Rename the stored character as the main server renamed it, so its memory follows the name.
    Only while the new name has no character of its own: nothing is merged or overwritten."""
    if not Character.objects.filter(name=old).exists() or Character.objects.filter(name=new).exists():
        return False
    try:
        character_rename(name=old, new_name=new)
    except (CharacterNotFound, CharacterNameTaken, InvalidCharacterName):
        return False  # another worker followed it first, or the name is not one we can hold
    logger.info("install characters.json: a character was renamed; its memory follows")
    return True


def characters_apply(install: InstallCharacters, *, previous: list[str] | None = None) -> CharactersSync:
    """Every character of the file exists with its card and the master's name; returns what changed.

    ``previous``: the names of the last copy applied, to recognise a rename."""
    names: list[str] = []
    invalid: list[str] = []
    changed: list[str] = []
    renamed: dict[str, str] = {}
    if (rename := _rename_of(previous, install)) is not None and _follow_rename(*rename):
        renamed[rename[0]] = rename[1]
    for name in install.cards:
        try:
            validate_character_name(name)
        except InvalidCharacterName:
            invalid.append(name)
            continue
        names.append(name)
        character = character_get_or_create(name=name)
        card = stored_card(install, name)
        if character.card == card and character.master_name == install.master_name:
            continue
        with transaction.atomic():
            Character.objects.filter(pk=character.pk).update(card=card, master_name=install.master_name)
        changed.append(name)
        for hook in _card_hooks.values():
            hook(character.pk)
    if invalid:
        logger.warning("install characters.json: %d names are not valid character names", len(invalid))
    logger.info("install characters.json applied characters=%d changed=%d", len(names), len(changed))
    return CharactersSync(
        generation=0, characters=names, invalid_names=invalid, changed=changed, renamed=renamed
    )


def characters_sync_if_changed() -> CharactersSync | None:
    """Before a request: apply ``characters.json`` when it changed since this process last did."""
    global _applied_generation, _last_sync
    state = characters_file_state()
    if state is None or state.data is None or state.generation == _applied_generation:
        return None
    with _sync_lock:
        if state.generation == _applied_generation:
            return None
        previous = _last_sync.characters if _last_sync is not None else None
        result = characters_apply(parse_characters(state.data), previous=previous)
        _last_sync = replace(result, generation=state.generation)
        _applied_generation = state.generation
        return _last_sync


def characters_sync_forget() -> None:
    """The next check re-reads and re-applies the file (a test's fresh database, a reload)."""
    global _applied_generation, _last_sync, _watch
    with _watch_lock:
        _applied_generation = 0
        _last_sync = None
        _watch = None


@dataclass(frozen=True)
class InstallStatus:
    folder: str
    characters_file: str
    characters_ok: bool  # the file as it is now was read (False: missing, or kept the last good copy)
    characters_error: str  # why the current file was not taken
    characters_read_at: datetime | None  # when the copy in use was read
    characters: list[str]  # in the file
    current_character: str | None
    master_name: str
    vanished: list[str]  # stored here, no longer in the file: kept, never deleted silently
    invalid_names: list[str]
    core_config_ok: bool
    core_config_error: str
    # The memory folder (install.folder): first-start migration, refused files, vanished folders.
    migration: dict[str, Any] | None = None
    last_pass_at: datetime | None = None
    refused: list[dict[str, Any]] = field(default_factory=list)
    vanished_folders: list[str] = field(default_factory=list)


def install_status() -> InstallStatus | None:
    state = characters_file_state()
    config = install_config_dir()
    if state is None or config is None:
        return None
    install = parse_characters(state.data) if state.data is not None else None
    in_file = list(install.cards) if install else []
    vanished = (
        sorted(Character.objects.exclude(name__in=in_file).values_list("name", flat=True))
        if install is not None
        else []
    )
    core = core_config_state()
    memory_folder = install_folder_status() or {}
    return InstallStatus(
        folder=str(Path(config).parent),
        characters_file=str(state.path),
        characters_ok=not state.missing and not state.error,
        characters_error=state.error or ("missing" if state.missing else ""),
        characters_read_at=state.read_at,
        characters=in_file,
        current_character=install.current if install else None,
        master_name=install.master_name if install else "",
        vanished=vanished,
        invalid_names=_last_sync.invalid_names if _last_sync else [],
        core_config_ok=core is not None and not core.missing and not core.error,
        core_config_error=(core.error or ("missing" if core.missing else "")) if core else "",
        migration=memory_folder.get("migration"),
        last_pass_at=memory_folder.get("last_pass_at"),
        refused=memory_folder.get("refused", []),
        vanished_folders=memory_folder.get("vanished_folders", []),
    )
