"""Mutated training scripts never crash the analysis (an internal error in a rule is a bug)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from case_files import CASE_FILES
from ddplint.engine import lint_source
from ddplint.rules import select_rules

ROOT = Path(__file__).parent.parent
SOURCES = CASE_FILES + sorted((ROOT / "examples").glob("*.py"))


def mutate(lines: list[str], donors: list[list[str]], rng: random.Random) -> str:
    """Delete, duplicate, splice in foreign lines, or turn constants into ranks."""
    lines = list(lines)
    for _ in range(rng.randint(1, 6)):
        if not lines:
            lines = ["x = 1"]
        i = rng.randrange(len(lines))
        op = rng.random()
        if op < 0.3:
            del lines[i]
        elif op < 0.6:
            lines.insert(rng.randrange(len(lines)), lines[i])
        elif op < 0.8:
            lines[i] = lines[i].replace("0", "rank", 1)
        else:
            lines.insert(i, rng.choice(rng.choice(donors)))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(4))
def test_mutated_scripts_never_raise_or_break_a_rule(seed):
    rng = random.Random(seed)
    texts = [p.read_text().splitlines() for p in SOURCES]
    rules = select_rules()
    for _ in range(100):
        source = mutate(rng.choice(texts), texts, rng)
        errors = []
        diagnostics = lint_source(source, "mutant.py", rules, errors)
        assert errors == [], (errors[0].detail, source)
        assert all(d.location.row >= 1 and d.location.column >= 1 for d in diagnostics)
