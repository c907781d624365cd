"""The screen's look for the calls a caller-judged rule judges (`screen.may_call_any`, DDP008's
`torch.load`): it lets through every module whose import table names such a call, and may skip
a module that only holds the rule's trigger word (`pickle.load`, `self.load`)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from case_files import CASE_FILES
from ddplint.analysis import build_facts
from ddplint.analysis.imports import _CANONICAL_PREFIXES
from ddplint.api import lint_paths
from ddplint.rules import ALL_RULES, select_rules
from ddplint.runner import project_index
from ddplint.screen import may_call_any, rules_to_run

TORCH_LOAD = ("torch.load",)
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _engine_calls(source: str, qualified: str = "torch.load") -> bool:
    """Whether the engine's facts find a call of `qualified` (what the rule iterates over)."""
    return any(build_facts(cst.parse_module(source)).calls_named(qualified))


def _screen_calls(source: str) -> bool:
    return may_call_any(ast.parse(source), TORCH_LOAD)


CALLS_TORCH_LOAD = [
    "import torch\ndef restore(p):\n    return torch.load(p)\n",
    "import torch as th\nstate = th.load(p)\n",
    "import torch.serialization\nstate = torch.load(p)\n",
    "from torch import load\nstate = load(p)\n",
    "from torch import load as restore\nstate = restore(p)\n",
    "def restore(p):\n    import torch\n    return torch.load(p)\n",
    "import torch\nL = torch.load\nstate = L(p)\n",
    "import torch\nt = torch\nstate = t.load(p)\n",
    "import torch\nt = torch\nu = t\nstate = u.load(p)\n",
    "import torch\nL: object = torch.load\nstate = L(p)\n",
    "import torch\nif (L := torch.load):\n    pass\nstate = L(p)\n",
    "import torch\nstate = (torch\n    .load)(p)\n",
    "import torch\nstate = (torch.  # a comment between the parts\n    load)(p)\n",
]


@pytest.mark.parametrize("source", CALLS_TORCH_LOAD)
def test_every_spelling_of_the_judged_call_is_let_through(source):
    assert _engine_calls(source), "the shape must be one the engine calls torch.load"
    assert _screen_calls(source)


# A star import may bind anything (a project module's `from torch import load`): the screen
# cannot tell without that module, so it lets the file through.
@pytest.mark.parametrize("source", ["from helpers import *\nstate = load(p)\n", "from . import *\nstate = th.load(p)\n"])
def test_a_star_import_is_let_through(source):
    assert _screen_calls(source)


NO_TORCH_LOAD = [
    "import pickle\nstate = pickle.load(f)\n",
    "import json\nconfig = json.load(f)\n",
    "class Store:\n    def restore(self, p):\n        return self.load(p)\n",
    "import torch\nmodel.load_state_dict(state)\nload = 3\n",
    "from torch import serialization\nstate = serialization.load(p)\n",
    "import torch.serialization as ser\nstate = ser.load(p)\n",
    "from .serialization import load\nstate = load(p)\n",
    "torch.load(p)\n",  # `torch` bound by no import: the engine names no callee either
    "import numpy as torch_like\nstate = torch_like.load(p)\n",
]


@pytest.mark.parametrize("source", NO_TORCH_LOAD)
def test_a_module_whose_loads_are_something_else_may_be_skipped(source):
    assert not _engine_calls(source)
    assert not _screen_calls(source)


def test_the_screen_says_yes_wherever_the_engine_finds_a_judged_call():
    """Over every script we have: each module whose facts hold a call a caller-judged rule judges
    is one the screen lets through (a superset; what it skips, the rule could not flag)."""
    judged = {name for rule in ALL_RULES for name in rule.judged_by_callers}
    assert judged == {"torch.load"}
    checked = 0
    for path in [*CASE_FILES, *sorted(EXAMPLES.rglob("*.py"))]:
        source = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue  # a case of broken code: the screen cuts it before this question
        for name in judged:
            if _engine_calls(source, name):
                checked += 1
                assert may_call_any(tree, (name,)), path
    assert checked >= 20


def test_no_renamed_torch_path_becomes_a_judged_call():
    """The engine renames some torch paths to their public names; the screen compares the names
    as imported. That is the same answer only while no public name it renames to is a judged
    call or a module above one."""
    for rule in ALL_RULES:
        for call in rule.judged_by_callers:
            for public in _CANONICAL_PREFIXES.values():
                assert not (call == public or call.startswith(public + ".")), (call, public)


HELPER = """\
import torch as th


def restore(model, path):
    model.load_state_dict(th.load(path))
"""

PICKLE_HELPER = """\
import pickle


def restore(path):
    with open(path, "rb") as f:
        return pickle.load(f)
"""

DISTRIBUTED_CALLER = """\
import os
import torch.distributed as dist
from helpers import restore


def main():
    dist.init_process_group("nccl")
    restore(model, "last.pt")


main()
"""


def _screened_and_found(tmp_path: Path, helper: str) -> tuple[list[str], list[int]]:
    """The rules the screen runs on helpers.py, and the rows DDP008 flags there, in a project
    whose distributed train.py calls it on every rank."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "helpers.py").write_text(textwrap.dedent(helper))
    (tmp_path / "train.py").write_text(DISTRIBUTED_CALLER)
    helper_path = str(tmp_path / "helpers.py")
    project = project_index([helper_path, str(tmp_path / "train.py")])
    screened = rules_to_run((tmp_path / "helpers.py").read_bytes(), helper_path, select_rules(), project)
    found = lint_paths([str(tmp_path)], select_rules(["DDP008"]), jobs=1)
    return [rule.code for rule in screened.rules], [d.location.row for d in found if d.filename.endswith("helpers.py")]


def test_a_helper_that_loads_with_torch_is_screened_in_and_flagged(tmp_path):
    assert _screened_and_found(tmp_path, HELPER) == (["DDP008"], [5])


def test_a_helper_that_loads_with_pickle_is_screened_out(tmp_path):
    assert _screened_and_found(tmp_path, PICKLE_HELPER) == ([], [])
