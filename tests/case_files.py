"""Where the linter's test data lives: user scripts that ddplint only parses, never imports or runs.

- `tests/rules/ddpNNN/cases/flag/`: scripts a rule must flag, each finding marked by a trailing
  `# <- DDPNNN` on its line; `tests/rules/ddpNNN/cases/ok/`: its look-alikes, where no default rule reports
  anything. One home per rule (ruff's fixtures model), read by tests/test_corpus.py.
- `tests/corpus/`: whole training scripts of several rules at once (`clean/`, `flagged/`, same marks).

Tests that run over "every script we have" (same answer, screens, positions, properties) take
`CASE_FILES`; pytest collects none of them (tests/conftest.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CORPUS = TESTS / "corpus"
RULES = TESTS / "rules"
KINDS = ("flag", "ok")  # the folders of a rule's cases: must be flagged where marked / left alone

RULE_CASES = sorted(path for kind in KINDS for path in RULES.glob(f"ddp*/cases/{kind}/*.py"))
CASE_FILES = sorted(CORPUS.rglob("*.py")) + RULE_CASES


def is_case_data(path: Path) -> bool:
    """A file or folder inside the corpus or a rule's `cases/`: test data, never collected by pytest
    (the folders themselves are, so that pytest reports that it found nothing in them)."""
    path = path.resolve()
    if path.is_relative_to(CORPUS):
        return path != CORPUS
    return path.is_relative_to(RULES) and "cases" in path.relative_to(RULES).parts[1:-1]


def must_be_flagged(path: Path) -> bool:
    """A script whose marks are the findings it must get (the other kind must get none)."""
    return path.parent.name in ("flagged", "flag")


def copy_case_files(destination: Path) -> None:
    """Every case file into `destination`, laid out as under tests/ (corpus/..., rules/ddpNNN/cases/...)."""
    for path in CASE_FILES:
        target = destination / path.relative_to(TESTS)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
