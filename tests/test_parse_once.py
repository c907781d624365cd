"""One libcst parse per file per run: a module that one file imports (its summary) and that the
run also analyses for its own findings is parsed once, and sharing its tree changes no finding."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import libcst
import pytest

from ddplint.analysis import syntax
from ddplint.api import lint_paths
from ddplint.rules import select_rules

# Analysed for its own findings (DDP003) and offering a loader factory to
# the script that imports it (summarised for the script: DDP001 there).
HELPERS = (
    "import torch.nn as nn\n"
    "from torch.utils.data import DataLoader\n\n"
    "def build_loader(dataset):\n"
    "    return DataLoader(dataset, batch_size=8, shuffle=True)\n\n"
    "net = nn.DataParallel(nn.Linear(2, 2))\n"
)
SCRIPT = (
    "import torch.distributed as dist\n"
    "from helpers import build_loader\n\n"
    "dist.init_process_group('nccl')\n"
    "loader = build_loader(train_set)\n"
    "for epoch in range(3):\n"
    "    for x in loader:\n"
    "        model(x).backward()\n"
    "        optimizer.step()\n"
)


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "helpers.py").write_text(HELPERS)
    (root / "train.py").write_text(SCRIPT)
    return root


def _findings(root: Path) -> list[tuple[str, int, int, str, str]]:
    return [
        (Path(d.filename).name, d.location.row, d.location.column, d.code, d.message)
        for d in lint_paths([str(root)], select_rules(), [], jobs=1)
    ]


@pytest.fixture
def parses(monkeypatch) -> Counter:
    """How often libcst parsed each content during the test."""
    counted: Counter = Counter()
    plain = libcst.parse_module

    def counting(source, *args, **kwargs):
        counted[source if isinstance(source, bytes) else source.encode()] += 1
        return plain(source, *args, **kwargs)

    syntax.forget_parsed()
    monkeypatch.setattr(libcst, "parse_module", counting)
    yield counted
    syntax.forget_parsed()


def test_a_module_summarised_and_analysed_in_one_run_is_parsed_once(tmp_path, parses):
    findings = _findings(_project(tmp_path / "project"))
    assert {name for name, *_ in findings} == {"helpers.py", "train.py"}  # both analysed
    assert parses[HELPERS.encode()] == 1
    assert parses[SCRIPT.encode()] == 1


def test_sharing_the_tree_changes_no_finding(tmp_path, monkeypatch):
    root = _project(tmp_path / "project")
    syntax.forget_parsed()
    shared = _findings(root)
    monkeypatch.setattr(syntax, "KEPT_SOURCE_BYTES", 0)  # every parse its own tree, as before
    syntax.forget_parsed()
    assert _findings(root) == shared


def test_only_the_last_trees_are_kept(parses, monkeypatch):
    monkeypatch.setattr(syntax, "KEPT_SOURCE_BYTES", 30)
    first, second = b"x = 1\n" * 3, b"y = 2\n" * 3
    assert syntax.parse_module(first) is syntax.parse_module(first)
    syntax.parse_module(second)  # 36 bytes in all: the first tree goes
    syntax.parse_module(first)
    assert parses[first] == 2 and parses[second] == 1
    too_large = b"z = 3\n" * 6
    assert syntax.parse_module(too_large) is not syntax.parse_module(too_large)
    assert syntax.parse_module(first) is not syntax.parse_module(second)  # kept again after
    syntax.parse_module(too_large)  # drops what was kept before its tree is built
    syntax.parse_module(first)
    assert parses[first] == 4
