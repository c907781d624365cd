"""The language server's incremental parse gives the findings of a fresh full analysis."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddplint.engine import lint_source
from ddplint.lsp.incremental import StatementParser

ROOT = Path(__file__).parent.parent
EXAMPLES = sorted(ROOT.glob("examples/*_buggy.py"))
FRAGMENTS = ("print(f'epoch {e", "x = 1", "    pass", "# a comment", "", "def helper(a):", "@decorator",
             "else:", "for batch in loader:", "sampler.set_epoch(epoch)", "'''", "    return (", ")", "\t y = 2")


def test_joined_module_is_the_text_and_has_the_same_findings_on_every_corpus_file():
    parser = StatementParser()
    files = sorted(ROOT.glob("tests/corpus/**/*.py"))[:120] + EXAMPLES
    for path in files:
        data = path.read_bytes()
        try:
            expected = cst.parse_module(data).code
        except cst.ParserSyntaxError:
            continue
        assert parser.parse(data).code == expected, path
        assert lint_source(data, str(path), parser=parser) == lint_source(data, str(path)), path
    assert parser.reused > 0 and parser.parsed > 0


def test_an_edit_reparses_only_the_statement_it_touched():
    parser = StatementParser()
    text = EXAMPLES[0].read_text()
    parser.parse(text.encode())
    before = parser.parsed
    edited = text.replace("def main():\n", "def main():\n    unused = 1\n", 1)
    assert edited != text
    assert parser.parse(edited.encode()).code == edited
    assert parser.parsed == before + 1


def test_a_repeated_statement_gets_its_own_nodes():
    parser = StatementParser()
    module = parser.parse(b"import torch.nn as nn\nm = nn.DataParallel(m)\nm = nn.DataParallel(m)\n")
    first, second = module.body[1], module.body[2]
    assert first is not second and first.body[0] is not second.body[0]


@st.composite
def edit_histories(draw):
    lines = draw(st.sampled_from(EXAMPLES)).read_text().split("\n")
    texts = []
    for _ in range(draw(st.integers(1, 5))):
        row = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(("insert", "delete", "replace", "duplicate", "digit")))
        if kind == "insert":
            indent = draw(st.sampled_from(("", "    ", "        ")))
            lines = lines[:row] + [indent + draw(st.sampled_from(FRAGMENTS))] + lines[row:]
        elif kind == "delete":
            lines = lines[:row] + lines[row + 1 :]
        elif kind == "replace":
            lines = lines[:row] + [draw(st.sampled_from(lines))] + lines[row + 1 :]
        elif kind == "duplicate":
            end = min(len(lines), row + draw(st.integers(1, 8)))
            lines = lines[:end] + lines[row:end] + lines[end:]
        else:
            lines = lines[:row] + [lines[row] + str(draw(st.integers(0, 9)))] + lines[row + 1 :]
        texts.append("\n".join(lines))
    return texts


@pytest.mark.slow  # a minute of random histories: the full suite runs it
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(edit_histories())
def test_incremental_findings_equal_a_fresh_analysis_over_any_edit_history(texts):
    parser = StatementParser(max_kept_bytes=3000)  # small: statements also fall out of the cache
    for text in texts:
        assert lint_source(text, "train.py", parser=parser) == lint_source(text, "train.py")
