"""What the README says about the rules is what the registry says: the rule table (codes, names,
order, off-by-default marks) and which rules speak only in distributed scripts."""

from __future__ import annotations

import re
from pathlib import Path

from ddplint.rules import ALL_RULES

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
CODES = r"((?:DDP\d{3}, )*DDP\d{3}(?: and DDP\d{3})?)"


def _codes(listed: str) -> list[str]:
    return re.findall(r"DDP\d{3}", listed)


def test_rule_table_lists_every_rule_in_registry_order():
    rows = re.findall(r"^\| (DDP\d{3}) \| ([\w-]+) \| (.*) \|$", README, flags=re.M)
    assert [(code, name) for code, name, _ in rows] == [(rule.code, rule.name) for rule in ALL_RULES]
    for (code, _, finds), rule in zip(rows, ALL_RULES):
        assert ("off by default" in finds) == (not rule.default_enabled), code


def test_distributed_only_rules_are_the_ones_the_readme_names():
    (only,) = re.findall(CODES + r" only speak in \*\*distributed scripts\*\*", README)
    (everywhere,) = re.findall(CODES + r" apply everywhere", README)
    assert _codes(only) == [rule.code for rule in ALL_RULES if rule.distributed_only]
    assert _codes(everywhere) == [rule.code for rule in ALL_RULES if not rule.distributed_only]
