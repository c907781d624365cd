"""Fixes as rules write them: edits anchored on syntax nodes, placed by a typed `Placement`, and
the helpers that say what an edit does (add a keyword argument, remove an argument, ensure an
import). `locate_fix` turns them into the located `diagnostics.Edit`s every front end applies.

This sits below the rules (they build these) and below the engine (it locates them); applying
located fixes to text is `ddplint.fix`'s job, above the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Literal, Mapping, Optional, Union

import libcst as cst
from libcst.metadata import CodeRange

from ddplint.analysis.syntax import keyword_arg
from ddplint.diagnostics import Applicability, Edit, Fix, Location, TextEnum
from ddplint.source import first_newline, split_lines


class Placement(TextEnum):
    """Where a `NodeEdit` puts its content, relative to its anchor node(s)."""

    REPLACE = "replace"  # the text from the start of `node` to the end of `end` (default: `node`)
    BEFORE = "before"  # insert right before `node`
    AFTER = "after"  # insert right after `node`
    UNTIL = "until"  # from the start of `node` to the start of `end` (an argument and the separator after it)
    FROM_END = "from_end"  # from the end of `node` to the end of `end` (the separator before an argument, and it)
    LINE_BEFORE = "line_before"  # a line of its own before the statement `node`, indented like it
    LINE_AFTER = "line_after"  # a line of its own after the statement `node` (past any comment)


# The placements by name, for rules that write `"line_after"`: a misspelt one is a type error
# (mypy) and a ValueError where the edit is made.
PlacementName = Literal["replace", "before", "after", "until", "from_end", "line_before", "line_after"]
_NEEDS_END = (Placement.UNTIL, Placement.FROM_END)


@dataclass(frozen=True)
class NodeEdit:
    """An edit anchored on syntax nodes; the engine turns it into a located `diagnostics.Edit`
    (`line_before` / `line_after`: the engine adds indentation and the newline)."""

    content: str
    node: cst.CSTNode
    where: Union[Placement, PlacementName] = Placement.REPLACE
    end: Optional[cst.CSTNode] = None

    def __post_init__(self) -> None:
        where = Placement(self.where)  # raises ValueError for an unknown placement
        if where in _NEEDS_END and self.end is None:
            raise ValueError(f"a {where.value!r} edit needs an `end` node")
        object.__setattr__(self, "where", where)


@dataclass(frozen=True)
class FindingFix:
    """A rule's fix in terms of nodes: message, edits, and whether `--fix` may apply it."""

    message: str
    edits: tuple[NodeEdit, ...]
    applicability: Union[Applicability, Literal["safe", "unsafe"]] = Applicability.SAFE

    def __post_init__(self) -> None:
        object.__setattr__(self, "applicability", Applicability(self.applicability))


# -- edits that say what they do --------------------------------------------------------------
def set_keyword_argument(call: cst.Call, name: str, value_code: str) -> Optional[NodeEdit]:
    """`call` with `name=value_code`: the value replaced where the keyword is passed, else the
    keyword appended after the last argument. None for a call without arguments (no node to
    anchor the insertion on)."""
    given = keyword_arg(call, name)
    if given is not None:
        return NodeEdit(value_code, given.value)
    if not call.args:
        return None
    return NodeEdit(f", {name}={value_code}", call.args[-1].value, Placement.AFTER)


def remove_argument(call: cst.Call, arg: cst.Arg) -> Optional[NodeEdit]:
    """Delete `arg` from `call` with one of the commas next to it. None when it is the only
    argument (nothing to anchor on but the argument itself: replace it instead)."""
    index = next(i for i, candidate in enumerate(call.args) if candidate is arg)
    start = arg.keyword if arg.keyword is not None else arg.value
    if index + 1 < len(call.args):
        following = call.args[index + 1]
        return NodeEdit("", start, Placement.UNTIL, following.keyword or following.value)
    if index > 0:
        return NodeEdit("", call.args[index - 1].value, Placement.FROM_END, arg.value)
    return None


def ensure_import(
    module: cst.Module, from_module: str, name: str, accepted_modules: Collection[str], taken: Collection[str] = ()
) -> tuple[Optional[str], Optional[NodeEdit]]:
    """(the name `name` is bound under, the edit that imports it or None if already imported).
    A module-level `from M import name [as alias]` with M in `accepted_modules` counts; otherwise
    `from from_module import name` goes after the last top-level import, or before the first
    statement after the docstring. (None, None) when `name` is `taken` by something else or the
    module has no statement to anchor on."""
    last_import = None
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                last_import = statement
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                source = module.code_for_node(small.module) if small.module is not None else ""
                for alias in small.names:
                    if source in accepted_modules and module.code_for_node(alias.name) == name:
                        return (alias.evaluated_alias or name), None
    if name in taken:
        return None, None
    line = f"from {from_module} import {name}"
    if last_import is not None:
        return name, NodeEdit(line, last_import, Placement.LINE_AFTER)
    first = _first_code_statement(module)
    return (None, None) if first is None else (name, NodeEdit(line, first, Placement.LINE_BEFORE))


def _first_code_statement(module: cst.Module) -> Optional[cst.CSTNode]:
    """The first statement after a module docstring (an import before it would demote it)."""
    for index, statement in enumerate(module.body):
        is_docstring = (
            index == 0
            and isinstance(statement, cst.SimpleStatementLine)
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        )
        if not is_docstring:
            return statement
    return None


# -- located edits ------------------------------------------------------------------------------
def locate_fix(fix: FindingFix, positions: Mapping[cst.CSTNode, CodeRange], source: str) -> Optional[Fix]:
    """A rule's node-anchored fix as located edits (what the CLI, LSP and json/sarif all see), or
    None when an anchor cannot be placed (a statement sharing its line after a `;`)."""
    lines = split_lines(source)
    newline = first_newline(source)
    edits = []
    for node_edit in fix.edits:
        edit = _locate(node_edit, positions, lines, newline)
        if edit is None:
            return None
        edits.append(edit)
    return Fix(fix.message, tuple(edits), fix.applicability)


def _locate(node_edit: NodeEdit, positions: Mapping, lines: list[str], newline: str) -> Optional[Edit]:
    where = node_edit.where
    start = positions[node_edit.node].start
    end = positions[node_edit.end if node_edit.end is not None else node_edit.node].end
    begin, finish = Location(start.line, start.column + 1), Location(end.line, end.column + 1)
    if where is Placement.REPLACE:
        return Edit(node_edit.content, begin, finish)
    if where is Placement.BEFORE:
        return Edit(node_edit.content, begin, begin)
    if where is Placement.AFTER:
        return Edit(node_edit.content, finish, finish)
    if where is Placement.UNTIL:
        stop = positions[node_edit.end].start
        return Edit(node_edit.content, begin, Location(stop.line, stop.column + 1))
    if where is Placement.FROM_END:
        node_end = positions[node_edit.node].end
        return Edit(node_edit.content, Location(node_end.line, node_end.column + 1), finish)
    indent = lines[start.line - 1][: start.column]
    if indent.strip():
        return None  # `a = 1; stmt`: no line of its own to put a line beside
    if where is Placement.LINE_BEFORE:
        line_start = Location(start.line, 1)
        return Edit(indent + node_edit.content + newline, line_start, line_start)
    if where is Placement.LINE_AFTER:  # at the end of the statement's last line, past any comment
        line_end = Location(end.line, len(lines[end.line - 1]) + 1)
        return Edit(newline + indent + node_edit.content, line_end, line_end)
    raise AssertionError(f"unhandled placement {where!r}")  # every Placement is handled above
