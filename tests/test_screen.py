"""The byte screen's substring tests decide exactly what whole-word regexes would."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from ddplint.analysis.distributed import DISTRIBUTED_TOKENS
from ddplint.rules import ALL_RULES
from ddplint.screen import _NAME_PATTERN, candidates_by_bytes

PATTERNS = (b"DataLoader", b"*valid*", b"load*", b"*_rank", b"a*b", b".to(0", b"'cuda")


@dataclass(frozen=True)
class FakeRule:
    triggers: tuple[bytes, ...]
    distributed_only: bool = False


def regex_screen(data: bytes, triggers: tuple[bytes, ...]) -> bool:
    """The screen as it was: one whole-word regex over the name patterns, substrings for the rest."""
    names = [t for t in triggers if _NAME_PATTERN.match(t)]
    if any(t in data for t in triggers if t not in names):
        return True
    if not names:
        return False
    alternatives = b"|".join(re.escape(p).replace(rb"\*", rb"\w*") for p in names)
    return re.search(rb"(?<!\w)(?:%s)(?!\w)" % alternatives, data) is not None


FRAGMENTS = st.sampled_from(
    [b"DataLoader", b"valid", b"load", b"_rank", b"a", b"b", b"x", b"_", b"0", b" ", b"\n", b".", b"(", b"'", b"cuda", b".to(0", b"\xc3\xa9"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(FRAGMENTS, max_size=12).map(b"".join), st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=3, unique=True))
def test_substring_screen_equals_the_whole_word_regex(data, triggers):
    rule = FakeRule(tuple(triggers))
    assert bool(candidates_by_bytes(data, [rule])) == regex_screen(data, rule.triggers)


def test_distributed_only_rules_need_a_distributed_token():
    distributed_rule = FakeRule((b"load",), distributed_only=True)
    assert candidates_by_bytes(b"x = load(f)\n", [distributed_rule]) == []
    assert candidates_by_bytes(b"import torch.distributed\nx = load(f)\n", [distributed_rule]) == [distributed_rule]


def test_every_rule_on_real_files_matches_the_regex_screen():
    from pathlib import Path

    root = Path(__file__).parent.parent
    for path in sorted(root.glob("examples/*.py")) + sorted(root.glob("tests/corpus/**/*.py"))[:150]:
        data = path.read_bytes()
        distributed = any(token in data for token in DISTRIBUTED_TOKENS)
        expected = [
            rule for rule in ALL_RULES if (distributed or not rule.distributed_only) and regex_screen(data, rule.triggers)
        ]
        assert candidates_by_bytes(data, ALL_RULES) == expected, path
