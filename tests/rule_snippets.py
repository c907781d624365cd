"""Helpers that lint a snippet or a small project for the tests of several rules (tests/rules/)."""

from __future__ import annotations

import textwrap

from ddplint.engine import lint_source
from ddplint.rules import RULES_BY_CODE

# -- rows of one rule's findings in a snippet ----------------------------------------------------


def finding_rows(source: str, code: str) -> list[int]:
    """Rows of `code`'s findings in the source."""
    text = textwrap.dedent(source).lstrip("\n")
    return [d.location.row for d in lint_source(text, "train.py", [RULES_BY_CODE[code]])]
