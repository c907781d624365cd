"""Applying fixes: located `Edit`s in, new source text out; safe vs unsafe; the fix-until-stable loop.

Every front end (`--fix`, `--diff`, the LSP's code actions, notebooks) goes through
`apply_fixes`, so a fix means the same thing everywhere.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Sequence

from ddplint.diagnostics import Diagnostic, Edit, Fix, Location

if TYPE_CHECKING:
    from ddplint.rules.base import FindingFix, Rule

# ruff's limit: a fix that enables another fix is applied on the next round, up to this many.
MAX_ROUNDS = 10

_LINE_END = re.compile(r"\r\n|\r|\n")


def apply_fixes(source: str, fixes: Sequence[Fix]) -> str:
    """`source` with every fix applied that does not collide with one applied before it."""
    return apply_fixes_counted(source, fixes)[0]


def apply_fixes_counted(source: str, fixes: Sequence[Fix]) -> tuple[str, list[Fix]]:
    """Apply fixes in source order, all edits of one fix or none. A fix whose edits overlap an
    already applied edit is skipped (it is offered again on the next round, against the new text);
    an edit identical to an applied one (two fixes adding the same import) counts as applied."""
    starts = _line_starts(source)
    applied: list[Fix] = []
    taken: list[tuple[int, int]] = []
    done: set[tuple[int, int, str]] = set()
    pending: list[tuple[int, int, str]] = []
    for fix in sorted(fixes, key=lambda f: min((e.location for e in f.edits), default=Location(0, 0))):
        spans = []
        for edit in fix.edits:
            start, end = _offset(starts, source, edit.location), _offset(starts, source, edit.end_location)
            if start is None or end is None or end < start:
                spans = None
                break
            spans.append((start, end, edit.content))
        if not spans:
            continue
        fresh = [span for span in spans if span not in done]
        if any(_overlaps(span, other) for span in fresh for other in taken):
            continue
        for span in fresh:
            done.add(span)
            taken.append(span[:2])
            pending.append(span)
        applied.append(fix)
    # Right to left, so earlier offsets stay valid; insertions at one point keep their order.
    text = source
    for start, end, content in sorted(pending, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:start] + content + text[end:]
    return text, applied


def _overlaps(a: tuple[int, int, str], b: tuple[int, int]) -> bool:
    (a_start, a_end), (b_start, b_end) = a[:2], b
    if a_start == a_end or b_start == b_end:  # an insertion collides only strictly inside a span
        point, (lo, hi) = (a_start, (b_start, b_end)) if a_start == a_end else (b_start, (a_start, a_end))
        return lo < point < hi or (a_start == a_end == b_start == b_end)
    return a_start < b_end and b_start < a_end


def _line_starts(source: str) -> list[int]:
    """Offsets at which each line starts, splitting where Python (and libcst) do."""
    return [0, *(match.end() for match in _LINE_END.finditer(source))]


def _offset(starts: list[int], source: str, location: Location) -> Optional[int]:
    row, column = location.row, location.column
    if row == len(starts) + 1 and column == 1:
        return len(source)  # just past a final newline
    if not 1 <= row <= len(starts):
        return None
    offset = starts[row - 1] + column - 1
    line_end = starts[row] if row < len(starts) else len(source)
    return offset if offset <= line_end else None


def locate_fix(fix: "FindingFix", positions: Mapping, source: str) -> Optional[Fix]:
    """A rule's node-anchored fix as located edits (what the CLI, LSP and json/sarif all see), or
    None when an anchor cannot be placed (a statement sharing its line after a `;`)."""
    lines = _LINE_END.split(source)
    newline = _first_newline(source)
    edits = []
    for node_edit in fix.edits:
        start = positions[node_edit.node].start
        end = positions[node_edit.end if node_edit.end is not None else node_edit.node].end
        begin, finish = Location(start.line, start.column + 1), Location(end.line, end.column + 1)
        if node_edit.where == "replace":
            edits.append(Edit(node_edit.content, begin, finish))
        elif node_edit.where == "before":
            edits.append(Edit(node_edit.content, begin, begin))
        elif node_edit.where == "after":
            edits.append(Edit(node_edit.content, finish, finish))
        elif node_edit.where == "until":  # from the start of `node` to the start of `end`
            stop = positions[node_edit.end].start
            edits.append(Edit(node_edit.content, begin, Location(stop.line, stop.column + 1)))
        elif node_edit.where == "from_end":  # from the end of `node` to the end of `end`
            edits.append(Edit(node_edit.content, Location(positions[node_edit.node].end.line, positions[node_edit.node].end.column + 1), finish))
        else:
            indent = lines[start.line - 1][: start.column]
            if indent.strip():
                return None  # `a = 1; stmt`: no line of its own to put a line beside
            if node_edit.where == "line_before":
                line_start = Location(start.line, 1)
                edits.append(Edit(indent + node_edit.content + newline, line_start, line_start))
            else:  # line_after: at the end of the statement's last line, past any comment
                line_end = Location(end.line, len(lines[end.line - 1]) + 1)
                edits.append(Edit(newline + indent + node_edit.content, line_end, line_end))
    return Fix(fix.message, tuple(edits), fix.applicability)


def _first_newline(source: str) -> str:
    match = _LINE_END.search(source)
    return match.group() if match else "\n"


def selected_fixes(diagnostics: Sequence[Diagnostic], unsafe: bool) -> list[Fix]:
    return [d.fix for d in diagnostics if d.fix is not None and (unsafe or d.fix.is_safe)]


@dataclass
class FixOutcome:
    source: str  # the fixed text (unchanged when nothing applied)
    fixed: int  # how many findings were fixed
    remaining: list[Diagnostic]  # what is still reported on the fixed text


def fix_until_stable(
    source: str, lint: Callable[[str], list[Diagnostic]], unsafe: bool = False
) -> FixOutcome:
    """Lint, apply the chosen fixes, lint again, until nothing changes: one fix may make another
    possible (DDP001's new sampler then needs DDP002's set_epoch). A round whose result does not
    parse is thrown away, so a fix can never leave the file broken."""
    diagnostics = lint(source)
    fixed = 0
    for _ in range(MAX_ROUNDS):
        fixes = selected_fixes(diagnostics, unsafe)
        if not fixes:
            break
        new_source, applied = apply_fixes_counted(source, fixes)
        if new_source == source or not _parses(new_source):
            break
        new_diagnostics = lint(new_source)
        source, diagnostics = new_source, new_diagnostics
        fixed += len(applied)
    return FixOutcome(source, fixed, diagnostics)


@dataclass
class DocumentFix:
    before: str
    after: str
    fixed: int
    remaining: list[Diagnostic]


def fix_document(
    source: str, filename: str, rules: Sequence["Rule"], unsafe: bool = False, errors: Optional[list] = None
) -> DocumentFix:
    """Fix one file's text (a Python file, or a notebook's JSON by its name) until stable, and
    what is still reported afterwards, located as users see it (notebooks: by cell)."""
    from ddplint.engine import lint_document, lint_source

    def lint(text: str) -> list[Diagnostic]:
        return lint_source(text, filename, rules, errors)

    if filename.endswith(".ipynb"):
        from ddplint.notebook import NotebookError, fix_notebook

        outcomes: list[FixOutcome] = []

        def fix_program(program: str) -> str:
            outcomes.append(fix_until_stable(program, lint, unsafe))
            return outcomes[-1].source

        try:
            after = fix_notebook(source, fix_program)
        except NotebookError as exc:
            from ddplint.engine import _error

            # Unreadable, or fixable only by reformatting the file: say so, keep the findings.
            found = lint_document(source, filename, rules, errors) if outcomes else []
            return DocumentFix(source, source, 0, [_error(filename, str(exc)), *found])
        fixed = outcomes[-1].fixed if outcomes else 0
        return DocumentFix(source, after, fixed, lint_document(after, filename, rules, errors))
    outcome = fix_until_stable(source, lint, unsafe)
    return DocumentFix(source, outcome.source, outcome.fixed, outcome.remaining)


def _parses(source: str) -> bool:
    try:
        compile(source, "<fixed>", "exec", dont_inherit=True, flags=0x400)  # ast.PyCF_ONLY_AST
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def unified_diff(before: str, after: str, filename: str) -> str:
    """The diff `--diff` prints: `a/` and `b/` headers like git, nothing when unchanged."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{filename}", f"b/{filename}"
    )
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


__all__ = ["Edit", "Fix", "FixOutcome", "apply_fixes", "apply_fixes_counted", "fix_until_stable", "unified_diff"]
