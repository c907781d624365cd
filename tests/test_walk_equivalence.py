"""`syntax.walk` and `syntax.value_walk` read the tree off the nodes' fields instead of running a
libcst visitor (which copies every node it passes): they give the visitor's nodes, the same
objects in the same order, from every node of every file of the examples, the corpus and the
rule cases, and of snippets written for the shapes whose visit branches."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from ddplint.analysis.syntax import parse_module, value_walk, walk

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(
    path for folder in ("examples", "tests/corpus", "tests/rules") for path in (ROOT / folder).rglob("*.py")
)
# Shapes whose libcst visit chooses between two ways of visiting a field (star import or names,
# f-string with or without a format spec), and others rare in the files above.
SNIPPETS = (
    "from . import *\nfrom .a import (b as c, d)\nfrom ..x import y\n",
    "x = f'{a!r:>{width}} {b=} {c:{d}.{e}f}'\n",
    "async def f():\n    async with a as b, c:\n        async for x in y:\n            await z\n",
    "match p:\n    case {'a': 1, **rest}:\n        pass\n    case [1, *others] | (2 as two):\n        pass\n",
    "@dec(1)\nclass A(B, metaclass=M):\n    x: int = 1\n    def f(self, /, a, *args, b=2, **kw) -> None:\n        global g\n",
    "lambda a, *, b=1: (yield from a)\nprint(*a, **k, sep='')\nx = a[1:2, ::3]; del x\n",
    "try:\n    pass\nexcept* E as e:\n    raise X from e\nelse:\n    pass\nfinally:\n    pass\n",
)


class _Visited(cst.CSTVisitor):
    """The nodes libcst's own visit passes, as the walks were written before."""

    def __init__(self, values_only: bool) -> None:
        self.nodes: list[cst.CSTNode] = []
        self.values_only = values_only

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.nodes.append(node)
        if self.values_only and isinstance(node, (cst.Attribute, cst.Arg)):
            node.value.visit(self)
            return False
        return True


def _visited(node: cst.CSTNode, values_only: bool) -> list[cst.CSTNode]:
    visitor = _Visited(values_only)
    node.visit(visitor)
    return visitor.nodes


def _same_nodes(found: list[cst.CSTNode], expected: list[cst.CSTNode]) -> bool:
    return len(found) == len(expected) and all(a is b for a, b in zip(found, expected))


def _check_subtrees(module: cst.Module, starts: type = cst.CSTNode) -> int:
    """The walks from the module and from each of its nodes of type `starts` (a walk from the
    root already puts every field of every node in order; the others check where it starts)."""
    everything = _visited(module, values_only=False)
    assert _same_nodes(walk(module), everything)
    assert _same_nodes(value_walk(module), _visited(module, values_only=True))
    for node in everything:
        if isinstance(node, starts):
            assert _same_nodes(walk(node), _visited(node, values_only=False)), type(node).__name__
            assert _same_nodes(value_walk(node), _visited(node, values_only=True)), type(node).__name__
    return len(everything)


def test_there_are_files_to_compare():
    assert len(FILES) > 100


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_the_walks_give_the_visitors_nodes_for_rare_shapes(snippet):
    assert _check_subtrees(parse_module(snippet, keep=False)) > 10


def test_the_walks_give_the_visitors_nodes_over_the_repository_files():
    """From the root and from every compound statement (functions, classes, loops: where the
    models start their walks) of every file."""
    compared = 0
    for path in FILES:
        try:
            module = parse_module(path.read_bytes(), keep=False)
        except cst.ParserSyntaxError:
            continue  # a case file written not to parse
        compared += _check_subtrees(module, starts=cst.BaseCompoundStatement)
    assert compared > 100_000


def test_a_field_left_out_while_none_is_walked_once_set(monkeypatch):
    """libcst's visit of an f-string part skips its format_spec while it is None: the walks must
    still reach the spec of a part walked after one without (the full suite walks f-strings in
    every order; a fresh record of fields shows it in one)."""
    from ddplint.analysis import syntax

    monkeypatch.setattr(syntax, "_VISITED_FIELDS", {})
    assert _check_subtrees(parse_module("x = f'{a}'\n", keep=False)) > 5
    assert _check_subtrees(parse_module("y = f'{b:>{width}}'\n", keep=False)) > 5
