"""Real-shaped training scripts: every `# <- CODE` mark is reported, and nothing else is.

`tests/corpus/clean/` holds correct DDP, Accelerate, Lightning, Fabric, HF Trainer, DeepSpeed,
Ray, nanoGPT-style and single-GPU scripts; `tests/corpus/flagged/` holds real bugs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ddplint.engine import lint_file
from ddplint.rules import select_rules
from ddplint.rules.base import expected_marks

CORPUS = Path(__file__).parent / "corpus"
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
