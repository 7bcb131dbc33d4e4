"""What the knowledge folder registers at start: the store's change listener (every change written
back), the install writer's start hook and ``continue``'s (the install's folder taken in), and the
whole-folder export/import's ``ROOT/knowledge/``."""

from __future__ import annotations

from install.folder import register_install_start_hook
from knowledge.install import portability
from knowledge.install.services import knowledge_folder_changed, knowledge_install_take_in
from knowledge.services import register_knowledge_change_listener
from nekomem.portability import register_root_file_handler
from nekomem.runtime.startup import register_continue_hook


def register() -> None:
    register_knowledge_change_listener(knowledge_folder_changed)
    register_install_start_hook("knowledge", knowledge_install_take_in)
    register_continue_hook(knowledge_install_take_in)
    register_root_file_handler(portability.HANDLER)
