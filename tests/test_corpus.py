"""Real-shaped training scripts: every `# <- CODE` mark is reported, and nothing else is.

`tests/corpus/clean/` holds correct DDP, Accelerate, Lightning, Fabric, HF Trainer, DeepSpeed,
Ray, nanoGPT-style and single-GPU scripts; `tests/corpus/flagged/` holds real bugs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ddplint.api import lint_file
from ddplint.rules import select_rules
from ddplint.rules.base import expected_marks

CORPUS = Path(__file__).parent / "corpus"
EXAMPLES = Path(__file__).parent.parent / "examples"
FILES = sorted(CORPUS.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(CORPUS)) for p in FILES])
def test_corpus_file(path: Path):
    expected = sorted(expected_marks(path.read_text()))
    actual = sorted((d.location.row, d.code) for d in lint_file(str(path), select_rules()))
    assert actual == expected


def test_corpus_has_both_kinds():
    assert any(p.parent.name == "clean" for p in FILES)
    assert sum(1 for p in FILES if p.parent.name == "flagged") >= 20
    for path in FILES:
        if path.parent.name == "clean":
            assert not expected_marks(path.read_text()), f"{path.name}: clean files carry no marks"
        else:
            assert expected_marks(path.read_text()), f"{path.name}: flagged files mark their findings"


def test_examples_buggy_flagged_fixed_silent():
    """`ddplint examples/` flags each *_buggy.py exactly where marked and is silent on *_fixed.py."""
    scripts = sorted(EXAMPLES.glob("*.py"))
    assert len([p for p in scripts if p.stem.endswith("_buggy")]) >= 4
    for path in scripts:
        actual = sorted((d.location.row, d.code) for d in lint_file(str(path), select_rules()))
        expected = sorted(expected_marks(path.read_text()))
        assert actual == expected, path.name
        assert bool(expected) == path.stem.endswith("_buggy"), path.name
