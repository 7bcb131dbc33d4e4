"""Group chat and the imports are apps beside the layers: nothing of the memory or the kernel imports
them, and they reach the layers only through their public modules."""

from __future__ import annotations

from pathlib import Path

from nekomem.devtools.boundaries import check_tree
from tests.devtools.test_boundaries import write


def test_groupchat_and_imports_are_imported_by_no_layer_and_read_only_layer_surfaces(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "nekomem/__init__.py": "",
            "nekomem/identity_hook.py": "from groupchat.identity import services\n",
            "facts/__init__.py": "",
            "facts/selectors.py": "",
            "facts/services/__init__.py": "",
            "facts/services/scoped.py": "",
            "persona/__init__.py": "",
            "persona/services.py": "",
            "recall/__init__.py": "",
            "recall/context.py": "from groupchat.selectors import subjects_browse\n",
            "recall/selectors.py": "",
            "groupchat/__init__.py": "",
            "groupchat/services/__init__.py": (
                "from facts.services import facts_scoped_store\nfrom facts.services.scoped import x\n"
                "from recall.selectors import y\n"
            ),
            "imports/__init__.py": "",
            "imports/services.py": (
                "from persona.services import persona_import_fuse\nfrom groupchat.services import z\n"
            ),
        },
    )
    assert [(v.path, v.rule, v.what) for v in check_tree(tmp_path)] == [
        ("groupchat/services/__init__.py", "private-access", "facts.services.scoped"),
        ("groupchat/services/__init__.py", "apart-direction", "recall.selectors"),
        ("imports/services.py", "apart-imported", "groupchat.services"),
        ("nekomem/identity_hook.py", "apart-imported", "groupchat.identity"),
        ("recall/context.py", "apart-imported", "groupchat.selectors"),
    ]
