"""`# noqa` comments: adding a code to a line, and finding the codes under the cursor.

The engine reads `# noqa` with a regular expression on the reported line; this module writes
comments that expression reads back, and reuses what is already on the line instead of adding a
second comment (`# noqa: DDP001` becomes `# noqa: DDP001, DDP002`).
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Optional

from ddplint.engine import NOQA
from ddplint.lsp.documents import split_lines

_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)


@dataclass(frozen=True)
class LineEdit:
    """Replace code points [start, end) of one line with `text`."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class LineSyntax:
    """What tokenizing the whole file says about where a comment may go on each line."""

    comment_start: dict[int, int]  # 0-based row -> column of the line's comment
    no_comment_rows: frozenset[int]  # rows that end inside a string or with a backslash


def line_syntax(text: str) -> Optional[LineSyntax]:
    """Comments and the rows a comment cannot be appended to; None if the file does not tokenize
    (then there is nothing to suppress either: unparsable files get only DDP000)."""
    lines = split_lines(text)
    comments: dict[int, int] = {}
    blocked: set[int] = set()
    try:
        # Rows as LSP counts them: only \n, \r\n and \r end a line.
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines)).readline):
            (start_row, start_col), (end_row, _) = token.start, token.end
            if token.type == tokenize.COMMENT:
                comments[start_row - 1] = start_col
            elif end_row > start_row:  # a multi-line string: its inner rows end inside it
                blocked.update(range(start_row - 1, end_row - 1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    for row, line in enumerate(lines):
        if row not in comments and line.rstrip().endswith("\\"):
            blocked.add(row)
    return LineSyntax(comments, frozenset(blocked))


def add_code(line: str, code: str, comment_start: Optional[int] = None) -> Optional[LineEdit]:
    """The edit that makes `line` suppress `code`, or None when it already does (a bare `# noqa`
    or the code already listed). `comment_start` is where the line's real comment begins, if
    the caller knows (a `# noqa` inside a string literal is not a comment to merge into)."""
    match = NOQA.search(line, comment_start or 0)
    if match is not None:
        return _merge(match, code)
    body = line.rstrip()
    return LineEdit(len(body), len(line), f"  # noqa: {code}")


def _merge(match: re.Match, code: str) -> Optional[LineEdit]:
    if match.group("codes") is None:
        return None  # a bare `# noqa` already silences every code on the line
    codes = [c.upper() for c in _CODE.findall(match.group("codes"))]
    if code.upper() in codes:
        return None
    start, end = match.span("colon")
    return LineEdit(start, end, ": " + ", ".join([*codes, code]))


@dataclass(frozen=True)
class NoqaHit:
    """The `# noqa` comment under a cursor: the codes it names (the one under the cursor if the
    cursor is on a code) and its span on the line."""

    codes: tuple[str, ...]
    start: int
    end: int
    bare: bool


def noqa_at(line: str, column: int) -> Optional[NoqaHit]:
    for match in NOQA.finditer(line):
        if not match.start() <= column <= match.end():
            continue
        if match.group("codes") is None:
            return NoqaHit((), match.start(), match.end(), bare=True)
        codes_start = match.start("codes")
        listed = [(codes_start + m.start(), codes_start + m.end(), m.group().upper())
                  for m in _CODE.finditer(match.group("codes"))]
        under_cursor = [(s, e, c) for s, e, c in listed if s <= column <= e]
        if under_cursor:
            s, e, c = under_cursor[0]
            return NoqaHit((c,), s, e, bare=False)
        return NoqaHit(tuple(c for _, _, c in listed), match.start(), match.end(), bare=False)
    return None
