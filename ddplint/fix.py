"""Applying fixes: located `Edit`s in, new source text out; safe vs unsafe; the fix-until-stable loop.

Every front end (`--fix`, `--diff`, the LSP's code actions, notebooks) goes through
`apply_fixes`, so a fix means the same thing everywhere. Rules write their fixes with
`ddplint.edits`; the engine locates them; `api.fix_document` runs the loop over a file;
`write_fixed_file` puts the result on disk without ever leaving a file half written.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from ddplint.diagnostics import Diagnostic, Fix, Location
from ddplint.source import line_starts, lines_with_ends

# ruff's limit: a fix that enables another fix is applied on the next round, up to this many.
MAX_ROUNDS = 10

def apply_fixes(source: str, fixes: Sequence[Fix]) -> str:
    """`source` with every fix applied that does not collide with one applied before it."""
    return apply_fixes_counted(source, fixes)[0]


def apply_fixes_counted(source: str, fixes: Sequence[Fix]) -> tuple[str, list[Fix]]:
    """Apply fixes in source order, all edits of one fix or none. A fix whose edits overlap an
    already applied edit is skipped (it is offered again on the next round, against the new text);
    an edit identical to an applied one (two fixes adding the same import) counts as applied."""
    starts = line_starts(source)
    applied: list[Fix] = []
    taken: list[tuple[int, int]] = []
    done: set[tuple[int, int, str]] = set()
    pending: list[tuple[int, int, str]] = []
    for fix in sorted(fixes, key=lambda f: min((e.location for e in f.edits), default=Location(0, 0))):
        spans = _spans(starts, source, fix)
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


def _spans(starts: list[int], source: str, fix: Fix) -> Optional[list[tuple[int, int, str]]]:
    """Each edit of `fix` as (start offset, end offset, content); None if one falls outside `source`."""
    spans = []
    for edit in fix.edits:
        start, end = _offset(starts, source, edit.location), _offset(starts, source, edit.end_location)
        if start is None or end is None or end < start:
            return None
        spans.append((start, end, edit.content))
    return spans


def _overlaps(a: tuple[int, int, str], b: tuple[int, int]) -> bool:
    (a_start, a_end), (b_start, b_end) = a[:2], b
    if a_start == a_end or b_start == b_end:  # an insertion collides only strictly inside a span
        point, (lo, hi) = (a_start, (b_start, b_end)) if a_start == a_end else (b_start, (a_start, a_end))
        return lo < point < hi or (a_start == a_end == b_start == b_end)
    return a_start < b_end and b_start < a_end


def _offset(starts: list[int], source: str, location: Location) -> Optional[int]:
    row, column = location.row, location.column
    if row == len(starts) + 1 and column == 1:
        return len(source)  # just past a final newline
    if not 1 <= row <= len(starts):
        return None
    offset = starts[row - 1] + column - 1
    line_end = starts[row] if row < len(starts) else len(source)
    return offset if offset <= line_end else None


def selected_fixes(diagnostics: Sequence[Diagnostic], unsafe: bool) -> list[Fix]:
    return [d.fix for d in diagnostics if d.fix is not None and (unsafe or d.fix.is_safe)]


@dataclass
class FixOutcome:
    source: str  # the fixed text (unchanged when nothing applied)
    fixed: int  # how many findings were fixed
    remaining: list[Diagnostic]  # what is still reported on the fixed text
    fixed_codes: tuple[str, ...] = ()  # the code of each finding fixed (`--show-fixes`)


def fix_until_stable(
    source: str, lint: Callable[[str], list[Diagnostic]], unsafe: bool = False
) -> FixOutcome:
    """Lint, apply the chosen fixes, lint again, until nothing changes: one fix may make another
    possible (DDP001's new sampler then needs DDP002's set_epoch). A round whose result does not
    parse, or no longer compiles, is thrown away, so a fix can never leave the file broken."""
    diagnostics = lint(source)
    fixed_codes: list[str] = []
    for _ in range(MAX_ROUNDS):
        fixes = selected_fixes(diagnostics, unsafe)
        if not fixes:
            break
        new_source, applied = apply_fixes_counted(source, fixes)
        if new_source == source or not _still_valid(source, new_source):
            break
        code_of = {id(d.fix): d.code for d in diagnostics if d.fix is not None}
        new_diagnostics = lint(new_source)
        source, diagnostics = new_source, new_diagnostics
        fixed_codes.extend(code_of[id(fix)] for fix in applied)
    return FixOutcome(source, len(fixed_codes), diagnostics, tuple(fixed_codes))


def _still_valid(before: str, after: str) -> bool:
    """The fixed text parses, and compiles where the text before did: some errors only the
    compiler raises (`f(sampler=None, sampler=...)`: keyword argument repeated), and `ddplint`
    would report the written file as DDP000."""
    return _compiles(after, only_ast=True) and (_compiles(after) or not _compiles(before))


def _compiles(source: str, only_ast: bool = False) -> bool:
    try:
        compile(source, "<fixed>", "exec", dont_inherit=True, flags=0x400 if only_ast else 0)  # ast.PyCF_ONLY_AST
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def unified_diff(before: str, after: str, filename: str) -> str:
    """The diff `--diff` prints: `a/` and `b/` headers like git, nothing when unchanged."""
    import difflib  # only --diff needs it: not imported by every run

    lines = difflib.unified_diff(
        lines_with_ends(before), lines_with_ends(after), f"a/{filename}", f"b/{filename}"
    )
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


# -- writing a fixed file back ---------------------------------------------------------------------
CHANGED_MEANWHILE = "not fixed: the file changed while ddplint was fixing it; left as it is (run --fix again)"


def write_fixed_file(path: str, expected: bytes, data: bytes) -> Optional[str]:
    """Replace the file at `path` (through a link: the file it names) by `data`, if it still holds
    `expected`, the bytes the fixes were computed from. None when written, else why not (one line);
    either way the file holds the old bytes or the new ones, never a mix, whatever fails or
    whoever kills the process: `data` goes to a temporary file in the same folder, reaches the disk
    (fsync), gets the file's permission bits and owner, and only then takes the file's name."""
    target = os.path.realpath(path)
    folder, name = os.path.split(target)
    try:
        status = os.stat(target)
        if not os.access(target, os.W_OK):  # a rename would get past a read-only file: refuse as a write would
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    except OSError as exc:
        return _cannot_write(exc)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".ddplint-fix.tmp", dir=folder)
        os.close(handle)
    except OSError as exc:
        return _cannot_write(exc, "cannot create a temporary file beside it")
    try:
        with open(temporary, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        _copy_owner_and_mode(status, temporary)
        with open(target, "rb") as current:  # as late as possible: the window left is one rename
            if current.read() != expected:
                os.unlink(temporary)
                return CHANGED_MEANWHILE
        os.replace(temporary, target)
    except BaseException as exc:  # a full disk, a lost permission, Ctrl-C: the file keeps its bytes
        _remove_quietly(temporary)
        if isinstance(exc, OSError):
            return _cannot_write(exc)
        raise
    _sync_folder(folder)
    return None


def _cannot_write(exc: OSError, step: str = "") -> str:
    reason = exc.strerror or type(exc).__name__
    return f"cannot write fixes: {step + ': ' if step else ''}{reason}; the file is left as it was"


def _copy_owner_and_mode(status: os.stat_result, temporary: str) -> None:
    """The new file keeps the old one's owner (when it differs: only root may give it back, so
    anyone else is refused rather than taking the file over) and permission bits."""
    made = os.stat(temporary)
    if (made.st_uid, made.st_gid) != (status.st_uid, status.st_gid) and hasattr(os, "chown"):
        os.chown(temporary, status.st_uid, status.st_gid)
    os.chmod(temporary, stat.S_IMODE(status.st_mode))  # after chown, which may clear set-id bits


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _sync_folder(folder: str) -> None:
    """Make the rename itself durable; a file system that cannot sync a folder has written it anyway."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


__all__ = [
    "CHANGED_MEANWHILE", "FixOutcome", "apply_fixes", "apply_fixes_counted", "fix_until_stable", "selected_fixes",
    "unified_diff", "write_fixed_file",
]
