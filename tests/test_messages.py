"""Messages say what, in one short line (ruff's habit): a finding's message fits one terminal line
and names the object; the why and the fix are in `full`, the editor and the rule's page.

Every rule present at run time is covered: each is run over the corpus, the examples and its own
documented `invalid` examples, and every message it produces is checked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from case_files import CASE_FILES
from ddplint.engine import lint_source
from ddplint.rules import ALL_RULES
from ddplint.rules.base import example_source

# A message longer than this wraps on an 80-120 column terminal next to `path:row:col: CODE [*] `.
LONGEST_MESSAGE = 110

ROOT = Path(__file__).parent.parent
SOURCES = CASE_FILES + sorted((ROOT / "examples").rglob("*.py"))


def _all_findings():
    found = []
    for path in SOURCES:
        found += lint_source(path.read_bytes(), str(path.relative_to(ROOT)), ALL_RULES)
    for rule in ALL_RULES:
        for number, example in enumerate(rule.invalid):
            found += lint_source(example_source(example), f"{rule.code}-invalid-{number}.py", ALL_RULES)
    return found


@pytest.fixture(scope="module")
def all_findings():
    return _all_findings()


def test_every_rule_speaks_somewhere(all_findings):
    """The check below would pass vacuously for a rule that never fired."""
    assert {rule.code for rule in ALL_RULES} <= {d.code for d in all_findings}


def test_messages_are_one_short_line(all_findings):
    too_long = [
        f"{d.filename}:{d.location.row}: {d.code} ({len(d.message)} chars) {d.message}"
        for d in all_findings
        if len(d.message) > LONGEST_MESSAGE or "\n" in d.message
    ]
    assert not too_long, "\n".join(too_long)


def test_every_finding_keeps_its_why(all_findings):
    """The long explanation moved out of the message, not away: each rule finding carries one."""
    missing = [f"{d.filename}:{d.location.row}: {d.code}" for d in all_findings if d.code != "DDP000" and not d.explanation]
    assert not missing, "\n".join(missing)
