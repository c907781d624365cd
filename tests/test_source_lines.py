"""One rule for where lines break (ddplint.source): Python's `\\r\\n`, `\\r` and `\\n`, never the
form feeds and other separators `str.splitlines()` also breaks at. Every place that turns a row
into a line of text goes through it, so a form feed above a finding moves nothing."""

from __future__ import annotations

import io
import sys

import pytest

from ddplint.cli import main
from ddplint.fix import unified_diff
from ddplint.source import (
    first_newline,
    line_at,
    line_starts,
    lines_with_ends,
    split_lines,
)

# A form feed (an Emacs page break) on the line before the finding.
PAGED = "import torch.nn as nn\n\x0c\nm = nn.DataParallel(m)\n"


@pytest.mark.parametrize(
    "text",
    ["", "a", "a\n", "a\r\nb\rc\n", "a\x0cb\x1c\x85\u2028c\n", "\n\n", "x\r"],
)
def test_helpers_agree_with_each_other(text):
    lines = split_lines(text)
    assert "".join(lines_with_ends(text)) == text
    assert len(line_starts(text)) == len(lines)
    assert [line_at(text, row) for row in range(1, len(lines) + 1)] == lines
    assert line_at(text, 0) is None and line_at(text, len(lines) + 1) is None


def test_only_pythons_line_breaks_split():
    assert split_lines("a\x0cb\x1cc\x85d\u2028e\r\nf\rg\nh") == ["a\x0cb\x1cc\x85d\u2028e", "f", "g", "h"]
    assert first_newline("a\r\nb\n") == "\r\n" and first_newline("a") == "\n"


def test_full_output_shows_the_reported_line_below_a_form_feed(tmp_path, monkeypatch, capsys):
    (tmp_path / "paged.py").write_text(PAGED)
    monkeypatch.chdir(tmp_path)
    assert main(["--no-cache", "--output-format", "full", "paged.py"]) == 1
    out = capsys.readouterr().out
    assert "paged.py:3:5: DDP003" in out
    assert "3 | m = nn.DataParallel(m)" in out


def test_full_output_from_stdin_shows_the_reported_line_below_a_form_feed(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(PAGED.encode())))
    assert main(["-", "--stdin-filename", "paged.py", "--output-format", "full"]) == 1
    assert "3 | m = nn.DataParallel(m)" in capsys.readouterr().out


def test_diff_keeps_a_form_feed_inside_its_line():
    before = "a = 1\x0c  # page\nb = 2\n"
    diff = unified_diff(before, before.replace("b = 2", "b = 3"), "x.py")
    assert "No newline at end of file" not in diff
    assert " a = 1\x0c  # page\n-b = 2\n+b = 3\n" in diff
