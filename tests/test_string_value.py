"""`syntax.string_value` reads most literals between their quotes instead of asking libcst to
evaluate them (the rules read the same literals on every edit of the language server). Whatever
the token, its answer must be the one `evaluated_value` gives: a str, or None for bytes and for
literals that do not evaluate."""

import random

import libcst as cst
import pytest

from ddplint.analysis.syntax import string_value

# The tokens include invalid escapes on purpose (`"\{"`); Python warns as it evaluates them.
pytestmark = pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning")


def _expected(node: cst.SimpleString):
    try:
        value = node.evaluated_value
    except Exception:
        return None
    return value if isinstance(value, str) else None


@pytest.mark.parametrize(
    "token",
    [
        '""', "''", '""""""', "''''''", '"cuda:0"', "'--local_rank'", 'r"a\\b"', 'R"x"', 'u"x"', 'U"x"',
        'b"bytes"', 'rb"x"', 'Br"x"', '"tab\\tescaped"', '"quote \\" inside"', "'''two\nlines'''",
        '"""a "quoted" word"""', '"\\N{BULLET}"', '"é"', '"\\x41"', "'a\\\nb'",
    ],
)
def test_written_tokens(token):
    node = cst.parse_expression(token)
    assert isinstance(node, cst.SimpleString)
    assert string_value(node) == _expected(node)


def test_random_tokens_match_evaluated_value():
    rng = random.Random(23)
    alphabet = ["a", " ", '"', "'", "\\", "\n", "\r", "é", "n", "{", "}", "N"]
    checked = 0
    for _ in range(3000):
        prefix = rng.choice(["", "r", "R", "u", "U", "b", "rb", "Br"])
        quote = rng.choice(['"', "'", '"""', "'''"])
        token = prefix + quote + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) + quote
        try:
            node = cst.parse_expression(token)
        except Exception:
            continue  # not a valid literal: nothing to read
        if not isinstance(node, cst.SimpleString):
            continue
        assert string_value(node) == _expected(node), token
        checked += 1
    assert checked > 1000  # the generator must keep producing literals for this to mean anything


def test_concatenated_strings_still_evaluated():
    node = cst.parse_expression('"cuda" ":0"')
    assert string_value(node) == "cuda:0"
    assert string_value(cst.parse_expression('f"cuda:{i}"')) is None
