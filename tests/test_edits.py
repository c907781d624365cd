"""Edits as rules write them (ddplint.edits) and the typed values that replace free strings:
placements, applicability and severity fail where they are made when misspelt."""

from __future__ import annotations

import json

import libcst as cst
import pytest

from ddplint.diagnostics import Applicability, Diagnostic, Fix, Location, Severity
from ddplint.edits import (
    FindingFix,
    NodeEdit,
    Placement,
    ensure_import,
    locate_fix,
    remove_argument,
    set_keyword_argument,
)
from ddplint.fix import apply_fixes
from ddplint.positions import positions_of
from ddplint.rules.base import Finding


def first_call(module: cst.Module) -> cst.Call:
    found: list[cst.Call] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    module.visit(Calls())
    return found[0]


def applied(source: str, module: cst.Module, *edits: NodeEdit) -> str:
    nodes = [n for e in edits for n in (e.node, e.end) if n is not None]
    fix = locate_fix(FindingFix("fix", edits), positions_of(module, nodes), source)
    assert fix is not None
    return apply_fixes(source, [fix])


def edit_on_first_call(source: str, make) -> str:
    module = cst.parse_module(source)
    edit = make(first_call(module))
    nodes = [n for n in (edit.node, edit.end) if n is not None]
    fix = locate_fix(FindingFix("fix", (edit,)), positions_of(module, nodes), source)
    assert fix is not None
    return apply_fixes(source, [fix])


# -- typed values -------------------------------------------------------------------------------
def test_an_unknown_placement_is_refused_where_the_edit_is_made():
    node = cst.Name("x")
    with pytest.raises(ValueError):
        NodeEdit("y", node, "line_afterr")  # type: ignore[arg-type]
    assert NodeEdit("y", node, "line_after").where is Placement.LINE_AFTER
    with pytest.raises(ValueError, match="needs an `end`"):
        NodeEdit("", node, Placement.UNTIL)


def test_applicability_and_severity_are_checked_and_read_as_text():
    with pytest.raises(ValueError):
        Fix("m", (), "unsure")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        FindingFix("m", (), "maybe")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Finding("DDP001", cst.Name("x"), "m", "fatal")  # type: ignore[arg-type]
    fix = Fix("m", (), "unsafe")  # type: ignore[arg-type]
    assert fix.applicability is Applicability.UNSAFE and not fix.is_safe
    diagnostic = Diagnostic("DDP001", "m", "f.py", Location(1, 1), Location(1, 2), severity="warning")  # type: ignore[arg-type]
    assert diagnostic.severity is Severity.WARNING
    # Outputs, the cache and the LSP read them as the text they always were.
    assert diagnostic.severity == "warning" and f"{diagnostic.severity}" == "warning"
    assert {"warning": 2}[diagnostic.severity] == 2
    assert json.dumps([Severity.ERROR, Applicability.SAFE]) == '["error", "safe"]'


# -- edits that say what they do -------------------------------------------------------------------
def test_set_keyword_argument_appends_or_replaces():
    assert edit_on_first_call("f(a, b=1)\n", lambda c: set_keyword_argument(c, "c", "2")) == "f(a, b=1, c=2)\n"
    assert edit_on_first_call("f(a, c=None)\n", lambda c: set_keyword_argument(c, "c", '"cpu"')) == 'f(a, c="cpu")\n'
    assert set_keyword_argument(first_call(cst.parse_module("f()\n")), "c", "2") is None


@pytest.mark.parametrize(
    "source, name, expected",
    [
        ("f(a, shuffle=True, b=2)\n", "shuffle", "f(a, b=2)\n"),
        ("f(a, shuffle=True)\n", "shuffle", "f(a)\n"),
        ("f(shuffle=True, b=2)\n", "shuffle", "f(b=2)\n"),
        ("f(x, y)\n", None, "f(y)\n"),
    ],
)
def test_remove_argument_takes_one_separator_with_it(source, name, expected):
    def remove(call: cst.Call):
        arg = next(a for a in call.args if (a.keyword.value if a.keyword else None) == name)
        return remove_argument(call, arg)

    assert edit_on_first_call(source, remove) == expected


def test_remove_the_only_argument_is_left_to_the_caller():
    call = first_call(cst.parse_module("f(x)\n"))
    assert remove_argument(call, call.args[0]) is None


def test_ensure_import_after_the_last_import_or_after_the_docstring():
    accepted = ("torch.utils.data", "torch.utils.data.distributed")
    source = '"""Doc."""\nimport os\n\nx = 1\n'
    module = cst.parse_module(source)
    name, edit = ensure_import(module, "torch.utils.data", "DistributedSampler", accepted)
    assert name == "DistributedSampler"
    assert applied(source, module, edit) == '"""Doc."""\nimport os\nfrom torch.utils.data import DistributedSampler\n\nx = 1\n'

    source = '"""Doc."""\r\nx = 1\r\n'
    module = cst.parse_module(source)
    name, edit = ensure_import(module, "torch.utils.data", "DistributedSampler", accepted)
    assert applied(source, module, edit) == '"""Doc."""\r\nfrom torch.utils.data import DistributedSampler\r\nx = 1\r\n'


def test_ensure_import_reuses_an_existing_import_and_respects_a_taken_name():
    accepted = ("torch.utils.data",)
    module = cst.parse_module("from torch.utils.data import DistributedSampler as DS\n")
    assert ensure_import(module, "torch.utils.data", "DistributedSampler", accepted) == ("DS", None)
    module = cst.parse_module("DistributedSampler = object\n")
    assert ensure_import(module, "torch.utils.data", "DistributedSampler", accepted, {"DistributedSampler"}) == (None, None)


def test_a_line_edit_beside_a_statement_that_shares_its_line_is_not_placed():
    source = "a = 1; b = 2\n"
    module = cst.parse_module(source)
    second = module.body[0].body[1]
    fix = locate_fix(FindingFix("fix", (NodeEdit("c = 3", second, Placement.LINE_AFTER),)), positions_of(module, [second]), source)
    assert fix is None
