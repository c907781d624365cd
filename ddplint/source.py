"""Facts about source text that every layer agrees on: where lines break, and how large a file
ddplint analyses at all.

Python's tokenizer (and so libcst, the engine's rows, LSP and `--output-format full`) breaks lines
at `\\r\\n`, `\\r` and `\\n` only. `str.splitlines()` also breaks at form feeds, `\\x1c`-`\\x1e`,
`\\x85`, `\\u2028` and `\\u2029`: a form feed (Emacs page breaks, much of the stdlib) would shift
every row below it. So no module splits lines itself; they all call these helpers.
"""

from __future__ import annotations

import re

LINE_BREAK = re.compile(r"\r\n|\r|\n")

# libcst holds ~500 bytes of tree per byte of source: a 2 MB file already costs ~1 GB. Hand-written
# code stays far below (the largest file in the torch package is 1.1 MB, and it is a stub); only
# generated tables get there, and they hold no training loop. The engine refuses larger files and
# the project index does not summarise them.
MAX_ANALYSED_BYTES = 2 * 10**6


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their terminators, split where Python splits them. A text that
    ends with a line break has an empty last line, as an editor shows it."""
    return LINE_BREAK.split(text)


def line_starts(text: str) -> list[int]:
    """The offset at which each line of `text` starts (the first is 0)."""
    return [0, *(match.end() for match in LINE_BREAK.finditer(text))]


def lines_with_ends(text: str) -> list[str]:
    """The lines of `text` with their terminators (none for an unterminated last line), split
    where Python splits them: joined, they give `text` back."""
    starts = line_starts(text)
    pieces = [text[start:end] for start, end in zip(starts, [*starts[1:], len(text)])]
    return pieces if pieces[-1] else pieces[:-1]


def first_newline(text: str) -> str:
    """The line break `text` uses (its first one), `\\n` when it has none: what inserted lines get."""
    match = LINE_BREAK.search(text)
    return match.group() if match else "\n"


def line_at(text: str, row: int) -> str | None:
    """Line `row` (1-based) of `text`, or None past its end."""
    lines = split_lines(text)
    return lines[row - 1] if 0 < row <= len(lines) else None
