"""The feature switches in ``config/core_config.json`` (reference §3.7, §12): one truth with the main server.

Read on every check (a stat; the file is parsed only when it changed); a missing key means on. A
write keeps every other key and replaces the file atomically.
"""

from __future__ import annotations

import threading

from install import install_config_dir
from install.files import ConfigFileError, FileState, WatchedJsonFile, write_json_atomic

CORE_CONFIG_FILE = "core_config.json"

_lock = threading.Lock()
_watch: WatchedJsonFile | None = None


def _core_watch() -> WatchedJsonFile | None:
    global _watch
    config = install_config_dir()
    if config is None:
        return None
    path = config / CORE_CONFIG_FILE
    if _watch is None or _watch.path != path:
        with _lock:
            if _watch is None or _watch.path != path:
                _watch = WatchedJsonFile(path)
    return _watch


def core_config_state() -> FileState | None:
    watch = _core_watch()
    return watch.state() if watch is not None else None


def core_switch_enabled(name: str) -> bool:
    """The switch as the install's file says now; missing (key or file) means on."""
    state = core_config_state()
    if state is None or state.missing or state.data is None:
        return True
    value = state.data.get(name)
    return True if value is None else bool(value)


def core_switch_write(*, name: str, enabled: bool) -> None:
    """Set one key of ``core_config.json``, keeping the others; refuses to overwrite a broken file."""
    watch = _core_watch()
    if watch is None:
        raise RuntimeError("not in install mode")
    with _lock:
        state = watch.state()
        if state.error:
            raise ConfigFileError(f"{state.path.name} does not parse ({state.error}); not overwritten")
        data = dict(state.data or {}) if not state.missing else {}
        data[name] = enabled
        write_json_atomic(state.path, data)
        watch.forget()
