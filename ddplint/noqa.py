"""`# noqa` comments checked (DDP090, unused-noqa: ruff's RUF100) and added (`--add-noqa`).

The engine reads `# noqa` (engine.NOQA) on a finding's first row; this module judges each such
comment that names ddplint codes and writes new ones in the same grammar.

What DDP090 reports, per comment, one finding listing them all:
- unused: a selected rule's code, and that rule reports nothing on the line;
- non-enabled: a ddplint rule that is not selected for the file;
- unknown: a `DDP` code that is no rule (`DDP999`, DDP000: problems with a file are never suppressed);
- duplicate: a code listed twice.
Codes of other tools (`F401`, `E501`: ruff shares the comment) and bare `# noqa` are never
reported; nor is a comment that lists DDP090 itself, nor anything in a file under `# ddplint: noqa`.
The fix (safe) removes the codes reported and keeps the rest; a comment left with no code goes.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Collection, Iterable, Optional, Sequence

from ddplint.diagnostics import Diagnostic, Edit, Fix, Location, Severity
from ddplint.engine import FILE_NOQA, NOQA
from ddplint.rules import ENTRIES_BY_CODE, UNUSED_NOQA_CODE
from ddplint.source import lines_with_ends, split_lines

OWN_PREFIX = "DDP"  # codes that are ddplint's; any other code in a noqa comment belongs to another tool
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)


@dataclass(frozen=True)
class Directive:
    """One `# noqa: CODES` comment: 1-based row, 0-based columns of the match and of its `: CODES`
    part, the codes in the order written (upper case), and whether anything but spaces follows."""

    row: int
    start: int
    end: int
    colon_start: int
    codes: tuple[str, ...]
    comment_start: int
    followed: bool
    before: str  # the line up to the directive


def directives(text: str) -> list[Directive]:
    """The `# noqa: CODES` comments of a file (bare ones left out); none when it does not tokenize."""
    lines = split_lines(text)
    found = []
    for row, column in line_syntax(text)[0].items():
        line = lines[row - 1]
        match = NOQA.search(line, column)
        if match is None or match.group("codes") is None:
            continue
        codes = tuple(code.upper() for code in _CODE.findall(match.group("codes")))
        followed = bool(line[match.end():].strip())
        before = line[: match.start()]
        found.append(Directive(row, match.start(), match.end(), match.start("colon"), codes, column, followed, before))
    return found


def line_syntax(text: str) -> tuple[dict[int, int], frozenset[int]]:
    """1-based row -> 0-based column where the row's comment starts, and the rows that end inside
    a string (a comment appended there would be part of it); both empty when the file does not
    tokenize (then it does not parse either: it gets DDP000, nothing to suppress)."""
    starts: dict[int, int] = {}
    inside: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO("\n".join(split_lines(text))).readline):
            if token.type == tokenize.COMMENT:
                starts[token.start[0]] = token.start[1]
            elif token.end[0] > token.start[0]:
                inside.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        return {}, frozenset()
    return starts, frozenset(inside)


def unused_noqa(
    text: str, filename: str, enabled: Collection[str], lint_unsuppressed: Callable[[str], Sequence[Diagnostic]]
) -> list[Diagnostic]:
    """DDP090 findings for `text`. `lint_unsuppressed(text)` lints a text (the file with its
    `# noqa` comments blanked): what fires there on a comment's row is what the comment silences."""
    if "noqa" not in text.lower() or FILE_NOQA.search(text):
        return []
    judged = [d for d in directives(text) if UNUSED_NOQA_CODE not in d.codes and any(_is_own(c) for c in d.codes)]
    if not judged:
        return []
    fired: set[tuple[int, str]] = set()
    if any(code in enabled for directive in judged for code in directive.codes):
        fired = {(d.location.row, d.code) for d in lint_unsuppressed(_blanked(text, judged))}
    findings = (_judge(directive, fired, enabled, filename) for directive in judged)
    return [finding for finding in findings if finding is not None]


def _is_own(code: str) -> bool:
    return code.startswith(OWN_PREFIX)


def _blanked(text: str, found: Iterable[Directive]) -> str:
    """`text` with these comments replaced by spaces: rows and columns stay where they were."""
    lines = lines_with_ends(text)
    for directive in found:
        line = lines[directive.row - 1]
        lines[directive.row - 1] = line[: directive.start] + " " * (directive.end - directive.start) + line[directive.end:]
    return "".join(lines)


def _judge(directive: Directive, fired: set[tuple[int, str]], enabled: Collection[str], filename: str) -> Optional[Diagnostic]:
    problems: dict[str, list[str]] = defaultdict(list)
    kept: list[str] = []
    for code in directive.codes:
        if code in kept or any(code in listed for listed in problems.values()):
            problems["duplicate"].append(code)
        elif not _is_own(code) or (directive.row, code) in fired:
            kept.append(code)
        elif code not in ENTRIES_BY_CODE:
            problems["unknown"].append(code)
        elif code not in enabled:
            problems["non-enabled"].append(code)
        else:
            problems["unused"].append(code)
    if not problems:
        return None
    order = ("unused", "non-enabled", "unknown", "duplicate")
    detail = "; ".join(f"{kind}: {', '.join(problems[kind])}" for kind in order if problems[kind])
    start, end = Location(directive.row, directive.start + 1), Location(directive.row, directive.end + 1)
    return Diagnostic(
        UNUSED_NOQA_CODE, f"unused `noqa` directive ({detail})", filename, start, end,
        fix=Fix("remove the unused codes" if kept else "remove the `noqa` directive", (_edit(directive, kept),)),
        severity=Severity.WARNING,
    )


def _edit(directive: Directive, kept: Sequence[str]) -> Edit:
    row = directive.row
    if kept:  # rewrite the code list
        return Edit(": " + ", ".join(kept), Location(row, directive.colon_start + 1), Location(row, directive.end + 1))
    if directive.followed and directive.start == directive.comment_start:
        # `x  # noqa: DDP001 why`: the rest stays a comment
        return Edit("#", Location(row, directive.start + 1), Location(row, directive.end + 1))
    # The whole directive, with the spaces before it when nothing follows it on the line.
    start = directive.start if directive.followed else len(directive.before.rstrip())
    return Edit("", Location(row, start + 1), Location(row, directive.end + 1))


# -- --add-noqa -----------------------------------------------------------------------------------
def add_noqa(text: str, diagnostics: Iterable[Diagnostic]) -> tuple[str, int]:
    """`text` with `# noqa: CODE` on each row that has a finding (codes merged into a `# noqa`
    already there; a bare one is left alone), and how many rows changed. Findings on rows that
    cannot take a comment (inside a multi-line string, after a backslash) are left as they are;
    so are DDP000 (a file's problems) and DDP090 (fixed by its fix)."""
    wanted: dict[int, list[str]] = defaultdict(list)
    for d in diagnostics:
        if d.cell is None and _is_own(d.code) and d.code in ENTRIES_BY_CODE and d.code not in wanted[d.location.row]:
            wanted[d.location.row].append(d.code)
    if not any(wanted.values()):
        return text, 0
    comments, inside_strings = line_syntax(text)
    lines = lines_with_ends(text)
    changed = 0
    for row, codes in sorted(wanted.items()):
        if not codes or not 0 < row <= len(lines) or row in inside_strings:
            continue
        new = _with_codes(lines[row - 1], codes, comments.get(row))
        if new is not None and new != lines[row - 1]:
            lines[row - 1] = new
            changed += 1
    return "".join(lines), changed


def _with_codes(line: str, codes: Sequence[str], comment_start: Optional[int]) -> Optional[str]:
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    if comment_start is None and body.rstrip().endswith("\\"):
        return None  # a continued line: a comment here would break the statement
    match = NOQA.search(body, comment_start) if comment_start is not None else None
    if match is not None:
        if match.group("codes") is None:
            return None  # a bare noqa comment silences every code already
        listed = [code.upper() for code in _CODE.findall(match.group("codes"))]
        merged = listed + [code for code in codes if code not in listed]
        return body[: match.start("colon")] + ": " + ", ".join(merged) + body[match.end():] + ending
    return body.rstrip() + f"  # noqa: {', '.join(codes)}" + ending
