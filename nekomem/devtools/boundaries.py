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
    # Group chat: above the layers, beside recall; it reads and writes subjects' rows through them.
    "groupchat": {layer: frozenset() for layer in ("persona", "reflections", "facts", "recent")},
    # Imports from elsewhere write persona statements and facts through their services.
    "imports": {"persona": frozenset(), "facts": frozenset()},
}
LOCKS_MODULE = "nekomem/characters/locks.py"
LOCK_CALLS = frozenset({"select_for_update"})
LOCK_SQL = re.compile(r"\bpg_(?:try_)?advisory\w*|\bBEGIN\s+IMMEDIATE\b", re.IGNORECASE)

# "path: rule: what" of each violation accepted for now; each names the work that removes it.
KNOWN_VIOLATIONS: frozenset[str] = frozenset(
    {
        # recall renders recent messages with recent's message helper (recall/ is being restructured).
        "recall/context.py: private-access: recent.messages",
    }
)


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
    for top in (KERNEL, *LAYERS, *APPS_APART):
        if not (root / top).is_dir():
            continue
        for path in sorted((root / top).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
            violations.extend(_import_violations(root, relative, top, tree))
            if relative != LOCKS_MODULE:
                violations.extend(_lock_violations(relative, tree))
    return sorted(violations, key=lambda v: (v.path, v.line, v.rule, v.what))


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
