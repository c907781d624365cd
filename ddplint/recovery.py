"""Analyse a file that does not parse, except for the statements that do not.

A half-typed line in an editor, or a Python 2 `print "x"` left in an old script, must not hide the
findings of the rest of the file. So the statement CPython trips over is replaced by `pass` at its
own indentation (or, where that does not compile either, by widening to the enclosing or previous
statement, up to the whole top-level statement), line numbers unchanged, and the repaired text is
analysed as usual. Each replaced statement gets one error at the position CPython reported.

Statement boundaries come from a small lexical scan (strings, comments and brackets, one regex):
`tokenize` stops at the first unterminated string, and before the error everything is lexically
sound anyway, which is where boundaries are looked up. After the error, where an unclosed bracket
would make the rest of the file look like one statement, the end of the broken statement is found
by indentation instead. CPython's compiler checks every repair, so the text handed on always
compiles, and the nesting guard in front of libcst (screen.compile_screen) still applies to it.
"""

from __future__ import annotations

import bisect
import re
import warnings
from dataclasses import dataclass
from typing import Optional

from ddplint.diagnostics import Diagnostic
from ddplint.source import compile_flags

# How the engine words a statement CPython rejects (screen.compile_screen words it the same way).
SYNTAX_ERROR_PREFIX = "syntax error: "
# Each repair costs one compile of the file; a file broken in more places than this is reported
# as one syntax error, as before.
MAX_REPAIRS = 40

# Clause keywords that continue the compound statement above them at the same indentation.
_CLAUSES = (b"else", b"elif", b"except", b"finally")

# Comments, strings (unterminated ones end at the line break, or at the end of the file for
# triple-quoted ones) and brackets: all a statement boundary depends on.
_LEXEMES = re.compile(
    rb"""(?P<comment>\#[^\r\n]*)
    |(?P<string>\"\"\"(?:\\.|[^\\])*?(?:\"\"\"|\Z)|'''(?:\\.|[^\\])*?(?:'''|\Z)
        |"(?:\\.|[^"\\\r\n])*(?:"|(?=[\r\n])|\Z)|'(?:\\.|[^'\\\r\n])*(?:'|(?=[\r\n])|\Z))
    |(?P<open>[(\[{])
    |(?P<close>[)\]}])""",
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class BrokenStatement:
    """One statement left out of the analysis, with CPython's reason and position."""

    message: str
    row: int
    column: int


@dataclass(frozen=True)
class Recovery:
    data: bytes  # the file with each broken statement replaced; compiles
    broken: tuple[BrokenStatement, ...]


def recover(data: bytes, filename: str, first_error: Optional[SyntaxError] = None) -> Optional[Recovery]:
    """The file with its broken statements replaced, or None where that does not save anything
    (not a syntax error, too many errors, nothing left). `first_error`: what compiling `data`
    raised, where the caller compiled it already (each compile of a long file costs)."""
    lines = data.splitlines(keepends=True)
    if not lines:
        return None
    layout = _Layout(lines)
    text = list(lines)
    spans: list[list[int]] = []  # [start, end) of each replaced statement, 0-based lines
    broken: list[BrokenStatement] = []
    for attempt in range(MAX_REPAIRS):
        error = first_error if attempt == 0 and first_error is not None else _compile_error(b"".join(text), filename)
        if error is None:
            return Recovery(b"".join(text), tuple(broken))
        if not isinstance(error, SyntaxError) or _is_decoding(error):
            return None
        row = min(max((error.lineno or 1) - 1, 0), len(lines) - 1)
        span = _repair_span(layout, spans, row)
        if span is None:
            return None
        if span.is_new:
            broken.append(BrokenStatement(str(error.msg), error.lineno or 1, error.offset or 1))
        _replace(text, lines, layout, span.start, span.end)
    return None


def blank_null_bytes_in_comments(data: bytes) -> Optional[tuple[bytes, int]]:
    """`data` with each null byte inside a comment made a space (offsets unchanged), and the
    offset of the first; None where no comment holds one. CPython refuses a file with a null byte
    anywhere, without saying where; what a comment holds changes nothing else, so the rest of the
    file can be analysed. Null bytes in code or in strings are left for CPython to report."""
    blanked = bytearray(data)
    first: Optional[int] = None
    for match in _LEXEMES.finditer(data):
        if match.lastgroup != "comment" or b"\0" not in match.group():
            continue
        start = match.start()
        blanked[start : match.end()] = match.group().replace(b"\0", b" ")
        first = start + match.group().index(b"\0") if first is None else first
    return None if first is None else (bytes(blanked), first)


def is_syntax_error(diagnostic: Diagnostic) -> bool:
    """A DDP000 for code that does not parse (the editor's own Python support shows those)."""
    return diagnostic.code == "DDP000" and diagnostic.message.startswith(SYNTAX_ERROR_PREFIX)


@dataclass
class _Span:
    start: int
    end: int
    is_new: bool  # a statement of its own, not a widening of an earlier repair


def _repair_span(layout: "_Layout", spans: list[list[int]], row: int) -> Optional[_Span]:
    """The lines to replace for an error on `row`: the statement there, or, where the error comes
    from an earlier repair (its `pass` does not fit), that repair widened. Overlapping repairs
    become one."""
    start = layout.statement_start(row)
    for span in spans:
        if span[0] <= row < span[1]:  # our own `pass` does not fit: widen the repair
            wider = layout.outer_start(span[0])
            if wider is None:
                return None
            new, is_new = [wider, max(span[1], layout.statement_end(wider, row))], False
            break
        if span[0] <= start < span[1]:  # the broken statement runs on past the repair
            new, is_new = [span[0], layout.statement_end(span[0], row)], False
            break
    else:
        new, is_new = [start, layout.statement_end(start, row)], True
    spans.append(new)
    _merge(spans)
    covering = next(span for span in spans if span[0] <= new[0] < span[1])
    return _Span(covering[0], covering[1], is_new)


def _merge(spans: list[list[int]]) -> None:
    spans.sort()
    merged: list[list[int]] = []
    for span in spans:
        if merged and span[0] < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], span[1])
        else:
            merged.append(span)
    spans[:] = merged


def _replace(text: list[bytes], lines: list[bytes], layout: "_Layout", start: int, end: int) -> None:
    """`pass` at the statement's indentation on its first line, empty lines for the rest: every
    other line keeps its number and its columns."""
    text[start] = layout.indent(start) + b"pass" + _line_break(lines[start])
    for index in range(start + 1, end):
        text[index] = _line_break(lines[index])


def _line_break(line: bytes) -> bytes:
    return line[len(line.rstrip(b"\r\n")) :]  # empty on a last line without one


def _compile_error(data: bytes, filename: str) -> Optional[BaseException]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(data, filename, "exec", compile_flags(filename), dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return exc
    return None


def _is_decoding(error: SyntaxError) -> bool:
    message = str(error.msg)
    return "decod" in message or "encoding" in message


class _Layout:
    """Per line: indentation, whether it starts a logical line (outside brackets, strings and
    backslash continuations), and whether it is code at all."""

    def __init__(self, lines: list[bytes]):
        self.lines = lines
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line))
        data = b"".join(lines)
        depth_at = [0] * len(lines)
        in_string = [False] * len(lines)
        depth, row = 0, 0
        for match in _LEXEMES.finditer(data):
            # Lines that start before this lexeme have the depth reached so far.
            while row < len(lines) and offsets[row] <= match.start():
                depth_at[row] = depth
                row += 1
            kind = match.lastgroup
            if kind == "open":
                depth += 1
            elif kind == "close":
                depth = max(depth - 1, 0)  # a stray closer must not shift the rest of the file
            elif kind == "string" and (b"\n" in match.group() or b"\r" in match.group()):
                first = bisect.bisect_right(offsets, match.start())
                last = bisect.bisect_left(offsets, match.end())
                for inner in range(first, min(last, len(lines))):
                    in_string[inner] = True
        for rest in range(row, len(lines)):
            depth_at[rest] = depth
        self.in_string = in_string
        self.code = [_is_code(line) and not in_string[row] for row, line in enumerate(lines)]
        continued = [line.rstrip(b"\r\n").endswith(b"\\") for line in lines]
        self.starts_statement = [
            self.code[row] and depth_at[row] == 0 and not (row and continued[row - 1]) for row in range(len(lines))
        ]

    def indent(self, row: int) -> bytes:
        line = self.lines[row]
        return line[: len(line) - len(line.lstrip(b" \t\f"))]

    def statement_start(self, row: int) -> int:
        """The first line of the logical line holding `row` (lines before an error are sound)."""
        while row > 0 and not self.starts_statement[row]:
            row -= 1
        return row

    def outer_start(self, start: int) -> Optional[int]:
        """The statement before `start` at the same or a lesser indentation: its previous sibling
        or the statement it is nested in. None at the top of the file."""
        width = len(self.indent(start))
        for row in range(start - 1, -1, -1):
            if self.starts_statement[row] and len(self.indent(row)) <= width:
                return row
        return None

    def statement_end(self, start: int, error_row: int) -> int:
        """The line after the statement starting at `start` (with its body and its else/except
        clauses), found by indentation: past the error, brackets cannot be trusted."""
        width = len(self.indent(start))
        for row in range(max(start, error_row) + 1, len(self.lines)):
            if not self.code[row]:
                continue
            stripped = self.lines[row].lstrip(b" \t\f")
            own_width = len(self.lines[row]) - len(stripped)
            if own_width > width or stripped[:1] in (b")", b"]", b"}"):
                continue
            if own_width == width and _starts_clause(stripped):
                continue
            return row
        return len(self.lines)


def top_level_statement_starts(lines: list[bytes]) -> list[int]:
    """0-based lines where a top-level statement begins, with its decorators and with its
    else/except clauses counted in (the lexical scan: sound where the code is). The language
    server parses the statements between two of these one by one (lsp/incremental.py)."""
    layout = _Layout(lines)
    starts = []
    after_decorator = False
    for row, line in enumerate(lines):
        if not layout.starts_statement[row] or line[:1] in (b" ", b"\t", b"\f"):
            continue
        if not after_decorator and not _starts_clause(line):
            starts.append(row)
        after_decorator = line.startswith(b"@")
    return starts


def _is_code(line: bytes) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(b"#")


def _starts_clause(stripped: bytes) -> bool:
    for keyword in _CLAUSES:
        if stripped.startswith(keyword) and stripped[len(keyword) : len(keyword) + 1] in (b":", b" ", b"\t", b"("):
            return True
    return False
