"""The architecture's boundaries as a lint (`make lint` runs ``python -m nekomem.devtools.boundaries``).

Rules, from ARCHITECTURE.md ("Dependencies point one way", "Locking"):

``kernel-imports-layer``
    Nothing under ``nekomem/`` imports a layer app; the URLconf reaches layer routes through
    ``include("app.urls")`` strings, which are not imports.
``layer-direction``
    A layer imports only layers below it in ``LAYERS`` (recall reads every layer, persona may read
    reflections, reflections may read facts, facts may read recent); never one above or beside it.
``private-access``
    Across layers only the public surface is imported: the package itself and its modules in
    ``PUBLIC_MODULES`` (a ``services/`` package by its package-level names, not its submodules),
    and never a module or name that starts with an underscore.
``apart-imported`` / ``apart-direction``
    An app that stands apart from the layers (``APPS_APART``: public knowledge, shared by every
    character, not memory) is imported by no layer and no kernel module, and reads only the layer
    surfaces listed for it (their public modules, plus the named pure packages: recall's engine).
``lock-outside-locks``
    ``select_for_update``, PostgreSQL advisory locks (``pg_advisory*``, ``pg_try_advisory*``) and
    ``BEGIN IMMEDIATE`` appear only in ``LOCKS_MODULE`` (docstrings may talk about them).
``kernel-imports-app``
    The kernel imports no app of the project at all (install mode, the MCP adapter, any app added
    later), not only no layer: what it needs of an app, the app registers as a hook.
``foundation-direction``
    An app beside the kernel that the layers build on (``FOUNDATION_APPS``: install mode) imports
    only the kernel: no layer, no app apart, no adapter.
``adapter-imported``
    An adapter (``ADAPTERS``: the MCP server) sits on top: it reads the public surface of the layers
    and apps apart, and nothing imports it.
``kernel-order``
    Inside the kernel, a module imports only modules of its own level or below in ``KERNEL_ORDER``
    (tools, storage, characters, journal, registries, surfaces).
``kernel-cycle``
    No circle among the kernel's modules, every import counted (inside functions and
    ``TYPE_CHECKING`` blocks too).
``kernel-deferred-import``
    No import of the project's own code inside a function in the kernel: a deferred import is how a
    circle hides. ``AppConfig.ready`` (the app registry is ready only then) and the entries of
    ``DEFERRED_IMPORTS``, each with its reason, are the exceptions. Third-party imports may be
    deferred (their load cost), as they can close no circle of ours.

Every import statement counts, including those inside functions and ``TYPE_CHECKING`` blocks.
``KNOWN_VIOLATIONS`` lists what the code did not yet meet when the check came in; an entry that no
longer matches anything is an error too, so the list only shrinks.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

KERNEL = "nekomem"
# Highest first: a layer may import any layer after it.
LAYERS = ("recall", "persona", "reflections", "facts", "recent")
PUBLIC_MODULES = frozenset({"models", "services", "selectors", "api"})
# Apps beside the layers: what each may read of which layer (beyond its public modules).
APPS_APART: dict[str, dict[str, frozenset[str]]] = {
    "knowledge": {"recall": frozenset({"engine"})},
    "groupchat": {layer: frozenset() for layer in ("persona", "reflections", "facts", "recent")},  # subjects
    "imports": {"persona": frozenset(), "facts": frozenset()},  # writes statements and facts via services
    # Row history, timeline, undo and rollback: it reaches every layer through the kernel's history-layer
    # registry (nekomem.journal.registry.HistoryLayer), so it imports no layer at all.
    "history": {},
}
# Apps beside the kernel that layers build on; they import only the kernel.
FOUNDATION_APPS = ("install",)
# Apps on top of everything: they read the layers' and apps apart's public surfaces; none imports them.
ADAPTERS = ("mcp_server",)
LOCKS_MODULE = "nekomem/characters/locks.py"
LOCK_CALLS = frozenset({"select_for_update"})
LOCK_SQL = re.compile(r"\bpg_(?:try_)?advisory\w*|\bBEGIN\s+IMMEDIATE\b", re.IGNORECASE)

# "path: rule: what" of each violation accepted for now; each names the work that removes it.
KNOWN_VIOLATIONS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    rule: str
    what: str
    why: str

    @property
    def key(self) -> str:
        return f"{self.path}: {self.rule}: {self.what}"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.what} ({self.why})"


def check_tree(root: Path) -> list[Violation]:
    """Every violation in the kernel and layer packages under ``root``, in path and line order."""
    violations: list[Violation] = []
    for top in checked_tops():
        if not (root / top).is_dir():
            continue
        for path in sorted((root / top).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
            violations.extend(_import_violations(root, relative, top, tree))
            violations.extend(_app_violations(root, relative, top, tree))
            if relative != LOCKS_MODULE:
                violations.extend(_lock_violations(relative, tree))
    violations.extend(kernel_violations(root))
    return sorted(violations, key=lambda v: (v.path, v.line, v.rule, v.what))


def checked_tops() -> tuple[str, ...]:
    return (KERNEL, *LAYERS, *APPS_APART, *FOUNDATION_APPS, *ADAPTERS)


def _imports(tree: ast.AST) -> Iterator[tuple[int, str, list[str]]]:
    """(line, absolute module, imported names) for every import; names are empty for ``import x``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module, [alias.name for alias in node.names]


def _import_violations(root: Path, path: str, top: str, tree: ast.AST) -> Iterator[Violation]:
    for line, module, names in _imports(tree):
        parts = module.split(".")
        target = parts[0]
        if top in ADAPTERS:
            if target in LAYERS or target in APPS_APART:
                yield from _private_violations(root, path, line, parts, names)
            continue
        if top in FOUNDATION_APPS:
            continue  # _app_violations: it imports only the kernel
        if target in APPS_APART and target != top:
            yield Violation(path, line, "apart-imported", module, f"nothing of the memory imports {target}")
            continue
        if target not in LAYERS or target == top:
            continue
        if top in APPS_APART:
            readable = APPS_APART[top]
            if target not in readable:
                yield Violation(
                    path, line, "apart-direction", module, f"{top} may read only {sorted(readable)}"
                )
            elif not (len(parts) == 2 and parts[1] in readable[target]):
                yield from _private_violations(root, path, line, parts, names)
            continue
        if top == KERNEL:
            yield Violation(path, line, "kernel-imports-layer", module, "the kernel imports no layer")
            continue
        if LAYERS.index(target) <= LAYERS.index(top):
            yield Violation(path, line, "layer-direction", module, f"{top} may not read {target}")
            continue
        yield from _private_violations(root, path, line, parts, names)


def _private_violations(
    root: Path, path: str, line: int, parts: list[str], names: list[str]
) -> Iterator[Violation]:
    module = ".".join(parts)
    if len(parts) > 2 or (len(parts) == 2 and parts[1] not in PUBLIC_MODULES):
        yield Violation(path, line, "private-access", module, _public_surface(parts[0]))
        return
    for name in names:
        if name.startswith("_"):
            yield Violation(path, line, "private-access", f"{module}.{name}", "underscore names are private")
        elif len(parts) == 1 and name not in PUBLIC_MODULES and _is_module(root / parts[0], name):
            yield Violation(path, line, "private-access", f"{module}.{name}", _public_surface(parts[0]))


def _public_surface(layer: str) -> str:
    return f"import {layer} or {layer}.{{{', '.join(sorted(PUBLIC_MODULES))}}} only"


def _is_module(package: Path, name: str) -> bool:
    return (package / f"{name}.py").is_file() or (package / name / "__init__.py").is_file()


def _lock_violations(path: str, tree: ast.AST) -> Iterator[Violation]:
    docstrings = _docstring_nodes(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in LOCK_CALLS:
            yield _lock_violation(path, node.lineno, node.attr)
        elif isinstance(node, ast.Name) and node.id in LOCK_CALLS:
            yield _lock_violation(path, node.lineno, node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            for match in LOCK_SQL.finditer(node.value):
                yield _lock_violation(path, node.lineno, match.group(0))


def _lock_violation(path: str, line: int, what: str) -> Violation:
    return Violation(path, line, "lock-outside-locks", what, f"locks are built only in {LOCKS_MODULE}")


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


# --- apps beside the kernel and the layers ----------------------------------------------------------------


def _app_violations(root: Path, path: str, top: str, tree: ast.AST) -> Iterator[Violation]:
    for line, module, _names in _imports(tree):
        target = module.split(".")[0]
        if target == top:
            continue
        if target in ADAPTERS:
            yield Violation(path, line, "adapter-imported", module, f"nothing imports the adapter {target}")
        elif top == KERNEL and target not in LAYERS and target not in APPS_APART and _is_app(root, target):
            yield Violation(
                path, line, "kernel-imports-app", module, "the kernel imports no app: register a hook"
            )
        elif top in FOUNDATION_APPS and (target in LAYERS or target in APPS_APART):
            yield Violation(path, line, "foundation-direction", module, f"{top} imports only the kernel")


def _is_app(root: Path, name: str) -> bool:
    return name != "tests" and (root / name / "__init__.py").is_file()


# --- the kernel's internal order ---------------------------------------------------------------------------

# Kernel modules by level, lowest first. A module belongs to the level of the longest prefix that names
# it (a prefix ``nekomem.x`` names ``nekomem.x`` and everything under it), and imports only modules of
# its own level or below.
KERNEL_ORDER: tuple[tuple[str, tuple[str, ...]], ...] = (
    # Pure tools on plain values, and the database backend (loaded before any model).
    (
        "tools",
        (
            "nekomem.devtools",
            "nekomem.embeddings",
            "nekomem.errors",
            "nekomem.language",
            "nekomem.llm",
            "nekomem.pages",
            "nekomem.settings",
            "nekomem.sqlite_backend",
            "nekomem.statements",
            "nekomem.subjects",
            "nekomem.timestamps",
        ),
    ),
    # The storage block every writer checks, and the registries the apps fill from ready().
    ("storage", ("nekomem.runtime", "nekomem.browser.registry")),
    # Characters and their locks; the schedules and ticks that run over them.
    (
        "characters",
        (
            "nekomem.characters",
            "nekomem.runtime.commands",
            "nekomem.runtime.schedules",
            "nekomem.runtime.tasks",
        ),
    ),
    # The event log, the outbox and the jobs, with the versions of rows the journal records on its events.
    ("journal", ("nekomem.journal",)),
    # What writes a character with its journal: character services and the portability registry.
    ("registries", ("nekomem.characters.services", "nekomem.portability")),
    # Routes, pages, admin, commands and app configs: what the outside world calls.
    (
        "surfaces",
        (
            "nekomem",
            "nekomem.browser",
            "nekomem.characters.admin",
            "nekomem.characters.api",
            "nekomem.characters.apps",
            "nekomem.characters.portability",
            "nekomem.characters.tasks",
            "nekomem.characters.urls",
            "nekomem.characters.views",
            "nekomem.characters.wire_schema",
            "nekomem.journal.admin",
            "nekomem.journal.api",
            "nekomem.journal.apps",
            "nekomem.journal.as_of",
            "nekomem.journal.browser",
            "nekomem.journal.browser_urls",
            "nekomem.journal.file_ids",
            "nekomem.journal.handlers",
            "nekomem.journal.outbox_file",
            "nekomem.journal.portability",
            "nekomem.runtime.admin",
            "nekomem.runtime.api",
            "nekomem.runtime.apps",
            "nekomem.runtime.management",
            "nekomem.runtime.middleware",
            "nekomem.runtime.services",
            "nekomem.runtime.status",
            "nekomem.runtime.urls",
            "nekomem.runtime.views",
            "nekomem.runtime.wire_schema",
        ),
    ),
)

# "path: function" -> why its import of our own code must wait for the call (never: to dodge a circle).
DEFERRED_IMPORTS: dict[str, str] = {
    "nekomem/embeddings/onnx.py: check_files": (
        "fetch runs as `python -m nekomem.embeddings.fetch` (make install); imported with the package, "
        "runpy would load it a second time"
    ),
}


def kernel_level(module: str) -> int:
    """The index in ``KERNEL_ORDER`` of a kernel module's level."""
    best, level = -1, len(KERNEL_ORDER) - 1
    for index, (_name, prefixes) in enumerate(KERNEL_ORDER):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, level = len(prefix), index
    return level


def kernel_violations(root: Path) -> list[Violation]:
    """The kernel's order, circles and deferred imports."""
    modules = _kernel_modules(root)
    if not modules:
        return []
    violations: list[Violation] = []
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        relative = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
        graph[module] = set()
        for line, target in _kernel_imports(tree, modules):
            if target == module:
                continue
            graph[module].add(target)
            if kernel_level(target) > kernel_level(module):
                above = KERNEL_ORDER[kernel_level(target)][0]
                here = KERNEL_ORDER[kernel_level(module)][0]
                why = f"{here} may not import {above}"
                violations.append(Violation(relative, line, "kernel-order", target, why))
        violations.extend(_deferred_violations(root, relative, tree))
    for circle in _circles(graph):
        first = modules[circle[0]].relative_to(root).as_posix()
        why = "the kernel holds no import circle"
        violations.append(Violation(first, 1, "kernel-cycle", " -> ".join([*circle, circle[0]]), why))
    return violations


def _kernel_modules(root: Path) -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in sorted((root / KERNEL).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if "migrations" in parts:
            continue
        name = ".".join(parts)
        modules[name.removesuffix(".__init__")] = path
    return modules


def _kernel_imports(tree: ast.AST, modules: dict[str, Path]) -> Iterator[tuple[int, str]]:
    """(line, kernel module) for every import of a kernel module, a name imported from a package
    counted as its submodule when it is one."""
    for line, module, names in _imports(tree):
        if module != KERNEL and not module.startswith(KERNEL + "."):
            continue
        targets = [f"{module}.{name}" for name in names if f"{module}.{name}" in modules] or [module]
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != KERNEL:
                yield line, target


def _deferred_violations(root: Path, path: str, tree: ast.AST) -> Iterator[Violation]:
    for function, node in _function_imports(tree):
        if function.name == "ready" and path.endswith("/apps.py"):
            continue
        if f"{path}: {function.name}" in DEFERRED_IMPORTS:
            continue
        for line, module, _names in _imports(node):
            top = module.split(".")[0]
            if top == KERNEL or _is_app(root, top):
                why = (
                    f"inside {function.name}(): import at module level, or give a reason in DEFERRED_IMPORTS"
                )
                yield Violation(path, line, "kernel-deferred-import", module, why)


def _function_imports(tree: ast.AST) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.stmt]]:
    """Every import statement inside a function, with the innermost function holding it."""

    def walk(
        node: ast.AST, function: ast.FunctionDef | ast.AsyncFunctionDef | None
    ) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.stmt]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom) and function is not None:
                yield function, child
            inner = child if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
            yield from walk(child, inner)

    yield from walk(tree, None)


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle (its modules in import order) per strongly connected group of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(module: str) -> None:
        # Recursive: the kernel's import depth is small.
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(_circle_in(sorted(group), graph))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return groups


def _circle_in(group: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A path from the group's first module back to itself, inside the group."""
    members = set(group)
    start = group[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        module = frontier.pop(0)
        for target in sorted(graph[module] & members):
            if target == start:
                path = [module]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return list(reversed(path))
            if target not in came_from:
                came_from[target] = module
                frontier.append(target)
    return group


def report(root: Path, known: frozenset[str] = KNOWN_VIOLATIONS) -> list[str]:
    """The lint's error lines: new violations, then known ones that no longer occur."""
    violations = check_tree(root)
    errors = [str(v) for v in violations if v.key not in known]
    seen = {v.key for v in violations}
    errors += [f"{key}: fixed, remove it from KNOWN_VIOLATIONS" for key in sorted(known - seen)]
    return errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check the architecture's import and locking boundaries.")
    parser.add_argument("root", nargs="?", type=Path, default=Path(__file__).resolve().parents[2])
    args = parser.parse_args(argv)
    errors = report(args.root)
    for error in errors:
        print(error)
    if errors:
        print(f"{len(errors)} boundary error(s); the rules: nekomem/devtools/boundaries.py", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
