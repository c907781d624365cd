"""The package's structure, checked from its sources: imports point one way between layers, no
module imports a private name of another, no import cycle, and every rule module is registered.

The graph is built with `ast` from the files under ddplint/ (every import statement, also those
inside functions and under TYPE_CHECKING: a deferred import is still a dependency)."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import pytest

import ddplint
from ddplint.rules import ALL_RULES, REGISTRY, RULE_MODULES

PACKAGE = Path(ddplint.__file__).resolve().parent

# Lowest first. A module may import its own layer and the layers below it, never one above.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("ddplint", "ddplint.source", "ddplint.diagnostics", "ddplint.positions", "ddplint.isolation"),  # facts every layer shares
    # The records of one pass over a module and what they are built on: never a derived model.
    (
        "ddplint.analysis.facts", "ddplint.analysis.records", "ddplint.analysis.syntax", "ddplint.analysis.imports",
        "ddplint.analysis.options", "ddplint.analysis.reaching", "ddplint.analysis.torch_api",
    ),
    ("ddplint.analysis",),  # what the code means: flow, the data/rank/device models, their builder (model.py)
    ("ddplint.edits",),  # fixes as rules write them
    ("ddplint.rules",),  # the checks
    ("ddplint.screen", "ddplint.recovery", "ddplint.cache", "ddplint.engine"),  # one file's source -> located findings
    ("ddplint.fix", "ddplint.notebook", "ddplint.discovery", "ddplint.config", "ddplint.output", "ddplint.ignore", "ddplint.noqa"),  # files, formats, fixes
    ("ddplint.runner",),  # checking files: one, or many in the process pool
    ("ddplint.api",),  # the public entry points: discovery + runner + fixes
    ("ddplint.cli", "ddplint.__main__", "ddplint.lsp", "ddplint.verify"),  # front ends
)

# Cycles that exist through imports deferred into functions, inside the analysis package being
# rebuilt in the accuracy issue (record types in a module that imports nothing else): listed so
# that no new one can appear; remove an entry when its cycle is gone (the test says so).
def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str) -> list[tuple[str, str, int]]:
    """(imported module, imported name or "", line) for every import of a ddplint module."""
    return _imports_in(MODULES[name], name)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """Lines of imports under `if TYPE_CHECKING:`: annotations only, never run."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            lines.update(inner.lineno for statement in node.body for inner in ast.walk(statement) if hasattr(inner, "lineno"))
    return lines


def runtime_graph() -> dict[str, set[str]]:
    """The imports that run (at module level or inside a function), without the annotation-only
    ones under `if TYPE_CHECKING:`: a cycle among these is what breaks or slows an import."""
    out: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        type_only = _type_checking_lines(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        out[name] = {target for target, _, line in imports_of(name) if target in MODULES and line not in type_only}
    return out


@lru_cache(maxsize=None)
def _imports_in(path: Path, name: str) -> list[tuple[str, str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, "", node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in MODULES:
                    found.append((submodule, "", node.lineno))
                else:
                    found.append((base, alias.name, node.lineno))
    return [(target, imported, line) for target, imported, line in found if target.split(".")[0] == "ddplint"]


def layer_of(name: str) -> int:
    matches = [
        (len(prefix), index)
        for index, members in enumerate(LAYERS)
        for prefix in members
        if name == prefix or name.startswith(prefix + ".")
    ]
    assert matches, f"{name} belongs to no layer: add it to LAYERS in {__file__}"
    return max(matches)[1]


def test_every_module_has_a_layer():
    for name in MODULES:
        layer_of(name)


def test_no_module_imports_a_higher_layer():
    upward = [
        f"{name}:{line} imports {target} (layer {layer_of(target)} above {layer_of(name)})"
        for name in MODULES
        for target, _, line in imports_of(name)
        if target in MODULES and layer_of(target) > layer_of(name)
    ]
    assert upward == []


def test_no_private_name_is_imported_from_another_module():
    private = [
        f"{name}:{line} imports {imported} from {target}"
        for name in MODULES
        for target, imported, line in imports_of(name)
        if imported.startswith("_") and not imported.startswith("__") and target != name
    ]
    assert private == []


def cycles(edges: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_facts_import_no_derived_model(monkeypatch, tmp_path):
    """facts.py keeps the records and generic queries; the models are built on top of it by
    analysis/model.py. A facts.py that builds a model again (even in a function) fails."""
    fake = tmp_path / "facts.py"
    fake.write_text("def data(self):\n    from ddplint.analysis.data import DataModel\n    return DataModel(self)\n")
    monkeypatch.setitem(MODULES, "ddplint.analysis.facts", fake)
    _imports_in.cache_clear()
    try:
        with pytest.raises(AssertionError, match="ddplint.analysis.facts:2 imports ddplint.analysis.data"):
            test_no_module_imports_a_higher_layer()
    finally:
        _imports_in.cache_clear()


def test_cycle_finder_finds_a_cycle_and_only_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {frozenset("abc")}
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == set()


def test_layer_check_catches_an_upward_import(monkeypatch, tmp_path):
    """The checks above can fail: a module of the lowest layer that imports the engine."""
    fake = tmp_path / "diagnostics.py"
    fake.write_text("def f():\n    from ddplint.engine import lint_source\n    from ddplint.api import _private\n")
    monkeypatch.setitem(MODULES, "ddplint.diagnostics", fake)
    with pytest.raises(AssertionError, match="ddplint.diagnostics:2 imports ddplint.engine"):
        test_no_module_imports_a_higher_layer()
    with pytest.raises(AssertionError, match="imports _private from ddplint.api"):
        test_no_private_name_is_imported_from_another_module()


def test_no_import_cycles():
    assert cycles(runtime_graph()) == set()


def test_only_annotation_imports_are_left_out_of_the_cycle_check(monkeypatch, tmp_path):
    """A back edge inside a function is a cycle; the same edge under `if TYPE_CHECKING:` is not."""
    facts = tmp_path / "facts.py"
    facts.write_text("def f():\n    from ddplint.analysis.data import DataModel\n")
    data = tmp_path / "data.py"
    data.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ddplint.analysis.facts import ModuleFacts\n")
    monkeypatch.setitem(MODULES, "ddplint.analysis.facts", facts)
    monkeypatch.setitem(MODULES, "ddplint.analysis.data", data)
    assert cycles(runtime_graph()) == set()
    data.write_text("def g():\n    from ddplint.analysis.facts import ModuleFacts\n")
    _imports_in.cache_clear()
    assert cycles(runtime_graph()) == {frozenset({"ddplint.analysis.facts", "ddplint.analysis.data"})}
    _imports_in.cache_clear()


def test_every_rule_module_is_registered():
    on_disk = sorted(path.stem for path in (PACKAGE / "rules").glob("*.py") if path.stem not in ("__init__", "base"))
    assert sorted(RULE_MODULES) == on_disk
    for module, entry, rule in zip(RULE_MODULES, REGISTRY, ALL_RULES):
        assert (rule.code, rule.name) == (entry.code, entry.name), f"{module} defines {rule.code} {rule.name}"
    assert len({rule.code for rule in ALL_RULES}) == len(ALL_RULES)
    assert len({rule.name for rule in ALL_RULES}) == len(ALL_RULES)
