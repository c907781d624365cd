"""Every rule's documented examples are executable: INVALID ones are flagged exactly where marked,
VALID ones are left alone (Fixit style)."""

from __future__ import annotations

import pytest

from ddplint.engine import lint_source
from ddplint.rules import ALL_RULES
from ddplint.rules.base import example_source, expected_marks

INVALID = [(rule, i, src) for rule in ALL_RULES for i, src in enumerate(rule.invalid)]
VALID = [(rule, i, src) for rule in ALL_RULES for i, src in enumerate(rule.valid)]


@pytest.mark.parametrize("rule,index,source", INVALID, ids=[f"{r.code}-invalid-{i}" for r, i, _ in INVALID])
def test_invalid_example_is_flagged_where_marked(rule, index, source):
    code = example_source(source)
    expected = [(line, c) for line, c in expected_marks(code) if c == rule.code]
    assert expected, "an invalid example marks its finding with `# <- CODE`"
    diagnostics = lint_source(code, "example.py", [rule])
    assert sorted((d.location.row, d.code) for d in diagnostics) == sorted(expected)


@pytest.mark.parametrize("rule,index,source", VALID, ids=[f"{r.code}-valid-{i}" for r, i, _ in VALID])
def test_valid_example_is_left_alone(rule, index, source):
    assert lint_source(example_source(source), "example.py", [rule]) == []


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_rule_is_fully_documented(rule):
    assert rule.invalid and rule.valid
    page = rule.documentation()
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix", "## When it stays silent",
                    "## Known blind spots"):
        assert heading in page
    assert rule.code in page and rule.name in page
    # The example a user copies from the docs is the one the tests run.
    assert example_source(rule.invalid[0]) in page


def test_rule_examples_mention_only_their_own_codes():
    codes = [rule.code for rule in ALL_RULES]
    assert len(set(codes)) == len(codes)
    for rule in ALL_RULES:
        for source in rule.invalid:
            assert {c for _, c in expected_marks(source)} == {rule.code}


def test_new_rules_defaults_and_severities():
    from ddplint.rules import RULES_BY_CODE, select_rules

    default = {rule.code for rule in select_rules()}
    assert "DDP012" not in default and "DDP012" in {r.code for r in select_rules(["DDP012"])}
    assert {f"DDP00{i}" for i in range(5, 10)} | {"DDP010", "DDP011"} <= default
    assert RULES_BY_CODE["DDP010"].severity == "warning"
    assert all(RULES_BY_CODE[code].severity == "error" for code in default - {"DDP010"})


def test_new_rules_are_registered_and_on_by_default():
    from ddplint.rules import RULES_BY_CODE, select_codes

    assert {"DDP013", "DDP014", "DDP015", "DDP016"} <= set(select_codes())
    assert RULES_BY_CODE["DDP015"].name == "accumulation-without-no-sync"
