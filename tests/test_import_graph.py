"""No import circles in podbook: the module graph built from its sources.

Every ``import`` and ``from ... import`` statement counts, at module level or, for the
lazy-import graph, inside a function too (a lazy import that closes a circle still ties the
two modules together). ``if TYPE_CHECKING:`` blocks never run and do not count. An edge goes
to the module named; ``from package import name`` goes to ``package.name`` when that is a
module. An import of one of the module's own parent packages (``from podbook import
__version__``) is no edge: Python has run that package before the module anyway.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import podbook

SRC = Path(podbook.__file__).parent


def module_names() -> dict[str, Path]:
    """Every module of podbook by dotted name (a package by its own name)."""
    names = {}
    for path in SRC.rglob("*.py"):
        parts = ["podbook", *path.relative_to(SRC).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _statements(body: list[ast.stmt], lazy: bool) -> Iterator[ast.stmt]:
    """The statements that run: module level (and in functions when ``lazy``)."""
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _statements(node.orelse, lazy)
            continue
        yield node
        nested = [getattr(node, field, []) for field in ("body", "orelse", "finalbody")]
        nested += [handler.body for handler in getattr(node, "handlers", [])]
        if lazy or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for block in nested:
                yield from _statements(block, lazy)


def imported(name: str, path: Path, modules: dict[str, Path], lazy: bool) -> set[str]:
    """The podbook modules that the module ``name`` (at ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _statements(ast.parse(path.read_text(), str(path)).body, lazy):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else base)
    parents = {name.rsplit(".", depth)[0] for depth in range(1, name.count(".") + 1)}
    return {target for target in found if target in modules and target not in {name, *parents}}


def import_graph(lazy: bool = True) -> dict[str, set[str]]:
    """The import graph of podbook: module → the podbook modules it imports (``lazy``: also
    the imports inside functions). Built once per run (a copy each time)."""
    return {name: set(targets) for name, targets in _import_graph(lazy).items()}


@functools.cache
def _import_graph(lazy: bool) -> dict[str, frozenset[str]]:
    modules = module_names()
    return {name: frozenset(imported(name, path, modules, lazy)) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


KNOWN_CYCLES: list[list[str]] = []
"""Cycles of lazy imports left to their owners; this list may only shrink."""


def test_the_graph_sees_the_imports_the_issue_names() -> None:
    graph = import_graph()
    assert "podbook.worker._cli" in graph["podbook.cli"]
    assert "podbook.notebook.catalog.commands" in graph["podbook.notebook.catalog.finder"]
    assert "podbook.notebook.parsing" in graph["podbook.notebook.catalog.commands"]
    assert "podbook.notebook.catalog.panel" in graph["podbook.notebook.catalog.handlers"]  # lazy
    assert "podbook.notebook.catalog.finder" in graph["podbook.notebook.catalog.views"]  # lazy
    assert "podbook" not in graph["podbook.client._core"]  # a parent package: no edge
    assert (
        "podbook.notebook.pods.handlers" not in import_graph(lazy=False)["podbook.notebook.magics"]
    )


def test_a_cycle_is_found_when_there_is_one() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_cycle_among_module_level_imports() -> None:
    found = cycles(import_graph(lazy=False))
    assert not found, "import cycles: " + "; ".join(" ↔ ".join(c) for c in found)


def test_no_cycle_among_lazy_imports_but_the_known_ones() -> None:
    found = cycles(import_graph())
    new = [cycle for cycle in found if cycle not in KNOWN_CYCLES]
    assert not new, "import cycles: " + "; ".join(" ↔ ".join(c) for c in new)


def test_the_cli_and_the_notebook_are_on_no_cycle() -> None:
    """The circles issue 12 names: ``cli`` with ``worker.cli``; in ``notebook``, ``parsing``
    with ``gpufinder``, ``podlogs`` and ``catalog``."""
    on_cycles = {module for cycle in cycles(import_graph()) for module in cycle}
    assert "podbook.cli" not in on_cycles
    assert not {module for module in on_cycles if module.startswith("podbook.notebook")}


ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def stated_layers() -> dict[str, list[str]]:
    """The layer rules ``docs/architecture.md`` states (its ``layers`` block): a package (or
    module) → the packages and modules it may import (``*``: anything)."""
    text = ARCHITECTURE.read_text()
    block = text.split("```layers\n", 1)[1].split("```", 1)[0]
    rules = {}
    for line in block.strip().splitlines():
        source, _, targets = line.partition("->")
        rules[f"podbook.{source.strip()}"] = [f"podbook.{t}" for t in targets.split()]
    return rules


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def ruled_by(module: str, rules: dict[str, list[str]]) -> str | None:
    """The most specific rule whose source holds ``module`` (None: no rule does)."""
    owners = [source for source in rules if _within(module, source)]
    return max(owners, key=len) if owners else None


def layer_breaks(graph: dict[str, set[str]], rules: dict[str, list[str]]) -> list[str]:
    """Every import the rules do not allow: ``a -> b``."""
    broken = []
    for module, targets in sorted(graph.items()):
        owner = ruled_by(module, rules)
        if owner is None:
            continue
        allowed = rules[owner]
        if "podbook.*" in allowed:
            continue
        package = ".".join(owner.split(".")[:2])
        for target in sorted(targets):
            if _within(target, package) or any(_within(target, a) for a in allowed):
                continue
            broken.append(f"{module} -> {target}")
    return broken


def test_the_layer_check_finds_a_broken_rule() -> None:
    rules = {"podbook.client": ["podbook.api"], "podbook.api": ["podbook.api"]}
    graph = {
        "podbook.client._core": {"podbook.api.base", "podbook.client.config"},
        "podbook.api.base": {"podbook.client._core"},
    }
    assert layer_breaks(graph, rules) == ["podbook.api.base -> podbook.client._core"]


def test_imports_keep_the_layers_architecture_md_states() -> None:
    rules = stated_layers()
    top = {name.split(".")[1] for name in module_names() if name.count(".") >= 1}
    ruled = {source.split(".")[1] for source in rules}
    assert top - {"__main__"} <= ruled, f"packages with no layer rule: {top - ruled}"
    broken = layer_breaks(import_graph(), rules)
    assert not broken, "imports the layers do not allow: " + "; ".join(broken)


def private_breaks(graph: dict[str, set[str]], rules: dict[str, list[str]]) -> list[str]:
    """Every import of another package's private module (``podbook.client._local`` from
    outside ``podbook.client``) that the importer's layer rule does not name outright."""
    broken = []
    for module, targets in sorted(graph.items()):
        owner = ruled_by(module, rules)
        allowed = rules[owner] if owner is not None else []
        if "podbook.*" in allowed:
            continue
        for target in sorted(targets):
            parts = target.split(".")
            depth = next((i for i, part in enumerate(parts) if i and part.startswith("_")), None)
            if depth is None or _within(module, ".".join(parts[:depth])):
                continue  # not private, or private to the importer's own package
            if not any(a.count(".") >= depth and _within(target, a) for a in allowed):
                broken.append(f"{module} -> {target}")
    return broken


def test_the_private_check_finds_a_private_import() -> None:
    rules = {"podbook.remote": ["podbook.client"], "podbook.notebook": ["podbook.client._local"]}
    graph = {
        "podbook.remote.ssh": {"podbook.client._home", "podbook.client.config"},
        "podbook.notebook.session": {"podbook.client._local"},
        "podbook.client.config": {"podbook.client._home"},
    }
    assert private_breaks(graph, rules) == ["podbook.remote.ssh -> podbook.client._home"]


def test_a_private_module_is_imported_only_by_its_package_or_where_the_layers_name_it() -> None:
    """A ``_name`` module is its package's own: another package reaches it only where the
    layers block of ``docs/architecture.md`` names it, and says why."""
    broken = private_breaks(import_graph(), stated_layers())
    assert not broken, "private modules imported from outside: " + "; ".join(broken)
