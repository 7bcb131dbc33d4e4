"""Install mode's part of the kernel's runtime, registered as hooks: the kernel imports no app."""

from __future__ import annotations

from install import install_root
from install.folder import install_refusals, install_watcher_start
from install.migration import install_migration_abandoned_release, install_migration_begin
from install.switches import core_switch_enabled, core_switch_write
from install.sync import install_status
from install.take_in import install_folder_reread_answer
from nekomem.browser.registry import register_overview_extra
from nekomem.runtime.startup import ServerHook, register_reread_hook, register_server_hook
from nekomem.runtime.status import register_install_status
from nekomem.runtime.switches import SwitchStore, register_switch_store


def register() -> None:
    # continue, /reload and /release_character take in the files changed from outside.
    register_reread_hook("install_folder", install_folder_reread_answer)
    register_server_hook(
        ServerHook(
            name="install folder",
            # Standalone again: a migration block left by an install start that never finished lifts.
            prestart=install_migration_abandoned_release,
            # A first start answers 409 until the install's memory folder is taken in.
            before_serving=install_migration_begin,
            # The writer thread keeps the folder in step while the server runs.
            background=install_watcher_start,
        )
    )
    register_switch_store(
        SwitchStore(
            active=lambda: install_root() is not None,
            enabled=core_switch_enabled,
            write=lambda name, enabled: core_switch_write(name=name, enabled=enabled),
        )
    )
    register_install_status(install_status)
    register_overview_extra("folder_refusals", lambda name: install_refusals(name=name))
