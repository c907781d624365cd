"""Every case file (tests/case_files.py): every `# <- CODE` mark is reported, and nothing else is.

Each rule's cases are in `tests/rules/ddpNNN/cases/` (`flag/`: real bugs, `ok/`: their look-alikes);
`tests/corpus/clean/` holds correct DDP, Accelerate, Lightning, Fabric, HF Trainer, DeepSpeed, Ray,
nanoGPT-style and single-GPU scripts, `tests/corpus/flagged/` whole scripts with several bugs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from case_files import CASE_FILES, KINDS, RULE_CASES, RULES, TESTS, must_be_flagged
from ddplint.api import lint_file
from ddplint.rules import select_rules
from ddplint.rules.base import expected_marks

EXAMPLES = Path(__file__).parent.parent / "examples"


@pytest.mark.parametrize("path", CASE_FILES, ids=[str(p.relative_to(TESTS)) for p in CASE_FILES])
def test_corpus_file(path: Path):
    expected = sorted(expected_marks(path.read_text()))
    actual = sorted((d.location.row, d.code) for d in lint_file(str(path), select_rules()))
    assert actual == expected


def test_corpus_has_both_kinds():
    assert any(not must_be_flagged(p) for p in CASE_FILES)
    assert sum(1 for p in CASE_FILES if must_be_flagged(p)) >= 20
    for path in CASE_FILES:
        if must_be_flagged(path):
            assert expected_marks(path.read_text()), f"{path.name}: flagged files mark their findings"
        else:
            assert not expected_marks(path.read_text()), f"{path.name}: clean files carry no marks"


def test_case_files_are_in_their_rules_folders():
    """`tests/rules/ddpNNN/cases/` holds only `flag/` and `ok/`, and a flag case marks its own rule."""
    for folder in RULES.glob("ddp*/cases/*"):
        assert folder.name in KINDS, f"{folder}: a rule's cases are in flag/ or ok/"
    for path in RULE_CASES:
        rule = path.parents[2].name.upper()
        if must_be_flagged(path):
            assert rule in {code for _, code in expected_marks(path.read_text())}, f"{path}: marks no {rule}"


def test_examples_buggy_flagged_fixed_silent():
    """`ddplint examples/` flags each *_buggy.py exactly where marked and is silent on *_fixed.py."""
    scripts = sorted(EXAMPLES.glob("*.py"))
    assert len([p for p in scripts if p.stem.endswith("_buggy")]) >= 4
    for path in scripts:
        actual = sorted((d.location.row, d.code) for d in lint_file(str(path), select_rules()))
        expected = sorted(expected_marks(path.read_text()))
        assert actual == expected, path.name
        assert bool(expected) == path.stem.endswith("_buggy"), path.name
