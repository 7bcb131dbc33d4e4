"""The boundary lint fires on each kind of violation and passes the repository as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from nekomem.devtools.boundaries import check_tree, main, report

REPO = Path(__file__).resolve().parents[2]


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A clean miniature of the layout: kernel, three layers, the lock module."""
    return write(
        tmp_path,
        {
            "nekomem/__init__.py": "",
            "nekomem/characters/locks.py": (
                "def lock(qs):\n    return qs.select_for_update()\n\nSQL = 'SELECT pg_advisory_lock(1)'\n"
            ),
            "recent/__init__.py": "",
            "recent/models.py": "",
            "recent/messages.py": "",
            "recent/selectors.py": "def _helper(): ...\ndef recent_window(): ...\n",
            "facts/__init__.py": "",
            "facts/services/__init__.py": "",
            "facts/services/records.py": "",
            "facts/selectors.py": "from recent.selectors import recent_window\nimport recent.models\n",
            "recall/__init__.py": "",
            "recall/context.py": "from facts.services import fact_update\nfrom recent import models\n",
        },
    )


def rules(root: Path) -> list[tuple[str, str, str]]:
    return [(v.path, v.rule, v.what) for v in check_tree(root)]


def test_a_clean_layout_has_no_violations(project: Path) -> None:
    assert rules(project) == []


def test_kernel_importing_a_layer_fires_even_inside_a_function(project: Path) -> None:
    write(project, {"nekomem/urls.py": "def routes():\n    from recall.context import x\n"})
    assert rules(project) == [
        ("nekomem/urls.py", "kernel-deferred-import", "recall.context"),
        ("nekomem/urls.py", "kernel-imports-layer", "recall.context"),
    ]


def test_a_layer_reading_upwards_fires(project: Path) -> None:
    write(
        project, {"recent/services.py": "from facts.selectors import x\n", "facts/api.py": "import recall\n"}
    )
    assert rules(project) == [
        ("facts/api.py", "layer-direction", "recall"),
        ("recent/services.py", "layer-direction", "facts.selectors"),
    ]


def test_a_layer_may_read_any_layer_below_it_but_none_above(project: Path) -> None:
    write(
        project,
        {
            "persona/__init__.py": "",
            "persona/selectors.py": "from reflections.models import R\nfrom recent.models import X\n",
            "reflections/__init__.py": "",
            "reflections/models.py": "",
            "reflections/services.py": "from persona.models import Entry\n",
        },
    )
    assert rules(project) == [("reflections/services.py", "layer-direction", "persona.models")]


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("from recent.messages import content_text\n", "recent.messages"),
        ("from recent import messages\n", "recent.messages"),
        ("import recent.messages\n", "recent.messages"),
        ("from recent.selectors import _helper\n", "recent.selectors._helper"),
        ("from facts.services.records import fact_hash\n", "facts.services.records"),
        ("from recent._internal import x\n", "recent._internal"),
    ],
)
def test_another_layers_private_module_or_name_fires(project: Path, source: str, what: str) -> None:
    write(project, {"recall/rendering.py": source})
    assert rules(project) == [("recall/rendering.py", "private-access", what)]


def test_a_layer_may_import_its_own_private_modules(project: Path) -> None:
    write(
        project,
        {"recent/services.py": "from recent.messages import x\nfrom recent.selectors import _helper\n"},
    )
    assert rules(project) == []


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("def f(qs):\n    return qs.select_for_update().get()\n", "select_for_update"),
        (
            "def f(c):\n    c.execute('SELECT pg_try_advisory_xact_lock(%s)', [1])\n",
            "pg_try_advisory_xact_lock",
        ),
        ("def f(c):\n    c.execute('begin immediate')\n", "begin immediate"),
    ],
)
def test_locks_outside_the_lock_module_fire(project: Path, source: str, what: str) -> None:
    write(project, {"facts/services/editing.py": source})
    assert rules(project) == [("facts/services/editing.py", "lock-outside-locks", what)]


def test_docstrings_may_talk_about_locks(project: Path) -> None:
    write(project, {"recent/services.py": '"""Writers take BEGIN IMMEDIATE via select_for_update."""\n'})
    assert rules(project) == []


def test_known_violations_must_still_occur(project: Path) -> None:
    write(project, {"recall/context.py": "from recent.messages import x\n"})
    known = frozenset({"recall/context.py: private-access: recent.messages"})
    assert report(project, known) == []
    write(project, {"recall/context.py": "from recent.selectors import x\n"})
    assert report(project, known) == [
        "recall/context.py: private-access: recent.messages: fixed, remove it from KNOWN_VIOLATIONS"
    ]


def test_the_command_fails_on_a_violation(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, {"nekomem/api.py": "import facts.models\n"})
    assert main([str(project)]) == 1
    assert "nekomem/api.py:1: kernel-imports-layer: facts.models" in capsys.readouterr().out


def test_the_repository_keeps_its_boundaries() -> None:
    assert report(REPO) == []


def test_an_app_apart_is_imported_by_no_layer_and_reads_only_its_listed_surface(project: Path) -> None:
    write(
        project,
        {
            "recall/engine/__init__.py": "",
            "recall/engine/bm25.py": "",
            "knowledge/__init__.py": "",
            "knowledge/search.py": (
                "from recall.engine import Bm25View\nfrom recall import selectors\n"
                "from recall.engine.bm25 import x\nfrom facts.selectors import y\n"
            ),
            "facts/knowledge_use.py": "from knowledge.search import z\n",
            "nekomem/hook.py": "import knowledge\n",
        },
    )
    assert rules(project) == [
        ("facts/knowledge_use.py", "apart-imported", "knowledge.search"),
        ("knowledge/search.py", "private-access", "recall.engine.bm25"),
        ("knowledge/search.py", "apart-direction", "facts.selectors"),
        ("nekomem/hook.py", "apart-imported", "knowledge"),
    ]


def test_the_kernel_imports_no_app_and_a_foundation_app_only_the_kernel(project: Path) -> None:
    write(
        project,
        {
            "install/__init__.py": "",
            "install/folder.py": "from nekomem.characters.locks import lock\nfrom facts.selectors import y\n",
            "nekomem/runtime/views.py": "from install.folder import reread\n",
            "recent/views.py": "from install import install_root\n",
        },
    )
    assert rules(project) == [
        ("install/folder.py", "foundation-direction", "facts.selectors"),
        ("nekomem/runtime/views.py", "kernel-imports-app", "install.folder"),
    ]


def test_an_adapter_reads_public_surfaces_and_nothing_imports_it(project: Path) -> None:
    write(
        project,
        {
            "knowledge/__init__.py": "",
            "knowledge/services.py": "",
            "mcp_server/__init__.py": "",
            "mcp_server/memory.py": (
                "from knowledge.services import query\nfrom recall.context import render\n"
                "from facts.services import fact_update\nfrom nekomem.characters.locks import lock\n"
            ),
            "recall/views.py": "from mcp_server.memory import tools\n",
        },
    )
    assert rules(project) == [
        ("mcp_server/memory.py", "private-access", "recall.context"),
        ("recall/views.py", "adapter-imported", "mcp_server.memory"),
    ]


def test_the_kernel_imports_only_its_own_level_or_below(project: Path) -> None:
    write(
        project,
        {
            "nekomem/runtime/__init__.py": "",
            "nekomem/runtime/state.py": "from nekomem.journal.jobs import work_sweep\n",
            "nekomem/runtime/status.py": "from nekomem.journal.jobs import work_sweep\n",
            "nekomem/journal/__init__.py": "",
            "nekomem/journal/jobs.py": "from nekomem.characters.locks import lock\n",
        },
    )
    assert rules(project) == [("nekomem/runtime/state.py", "kernel-order", "nekomem.journal.jobs")]


def test_a_circle_in_the_kernel_fires_even_through_type_checking(project: Path) -> None:
    write(
        project,
        {
            "nekomem/embeddings/__init__.py": "",
            "nekomem/embeddings/vectors.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from nekomem.embeddings.models import M\n"
            ),
            "nekomem/embeddings/models.py": "from nekomem.embeddings import vectors\n",
        },
    )
    assert rules(project) == [
        (
            "nekomem/embeddings/models.py",
            "kernel-cycle",
            "nekomem.embeddings.models -> nekomem.embeddings.vectors -> nekomem.embeddings.models",
        )
    ]


def test_a_deferred_import_of_our_code_in_the_kernel_fires_unless_ready_or_listed(project: Path) -> None:
    write(
        project,
        {
            "nekomem/llm/__init__.py": "",
            "nekomem/journal/__init__.py": "",
            "nekomem/journal/apps.py": (
                "class C:\n    def ready(self):\n        from nekomem.journal import jobs\n"
            ),
            "nekomem/journal/jobs.py": (
                "def run():\n    import tqdm\n    from nekomem.llm import chat\n"
                "    def inner():\n        import nekomem.llm\n"
            ),
            "nekomem/embeddings/onnx.py": (
                "def check_files():\n    from nekomem.embeddings.fetch import sha\n"
            ),
        },
    )
    assert rules(project) == [
        ("nekomem/journal/jobs.py", "kernel-deferred-import", "nekomem.llm"),
        ("nekomem/journal/jobs.py", "kernel-deferred-import", "nekomem.llm"),
    ]
