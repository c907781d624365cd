"""Jupyter notebooks: the code cells, checked as one program, findings located as cell and line,
fixes written back into the cells with the rest of the notebook byte for byte.

The program is the code cells joined in order, with IPython-only lines (`%magic`, `!shell`,
`obj?`) commented out (so line numbers stay put and nothing is executed) and a marker comment
between cells (so a fixed program splits back into the same cells). Comments are legal at any
indentation, so neither changes what the program means. Both markers are spelt so that they occur
nowhere in the notebook's own code (`_unused_marker`): a comment of the user's that looks like one
is never taken for it, and comes back exactly as it was.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from ddplint.diagnostics import Diagnostic, Edit, Fix, Location, error_diagnostic, one_line
from ddplint.source import read_file

CELL_MARKER = "#%% ddplint cell boundary"
MAGIC_PREFIX = "#ddplint-ipython: "  # both as spelt when the notebook's code does not contain them
# Cell magics whose body is still Python (ruff's list, trimmed); any other `%%` cell is skipped.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
# `obj?`, `obj??`, `?obj`: IPython's help syntax (only a bare dotted name, so `x = a  # why?` is code)
_HELP_LINE = re.compile(r"^\s*(?:\?{1,2}\s*[\w.]+|[\w.]+\?{1,2})\s*$")
# `files = !ls`, `out = %timeit -o f()`: IPython assigns a shell escape's or magic's output.
_ASSIGNED_ESCAPE = re.compile(r"^\s*[\w.]+(?:\s*,\s*[\w.]+)*\s*=\s*[!%]")
# IPython's automagic: its default shell aliases and the common line magics run without `%`
# (`ls data/`, `cd ..`, `pip install x`). Only a line that is not Python by itself counts.
_AUTOMAGIC_WORDS = frozenset(
    {
        "cd", "ls", "pwd", "cat", "cp", "mv", "rm", "rmdir", "mkdir", "ll", "lf", "lk", "lx", "ldir",
        "pip", "conda", "env", "load_ext", "reload_ext", "autoreload", "matplotlib", "time", "timeit",
        "run", "who", "whos", "history", "pushd", "popd", "dhist", "alias", "unalias", "sx", "sc",
    }
)


# Deeper JSON than this is not a notebook: nbformat's own documents nest under ten levels, and
# outputs and widget state a few dozen at most. Bounded so that whatever walks or writes the
# document back (json.dumps recurses) stays far from Python's recursion limit.
MAX_JSON_DEPTH = 200


class NotebookError(ValueError):
    """A file that is not a notebook we can read; the message says why, in one line."""


def _nesting_exceeds(document: Any, limit: int) -> bool:
    """Whether lists and objects nest deeper than `limit` (a loop, not recursion)."""
    pending = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > limit:
                    return True
                pending.append((child, depth + 1))
    return False


@dataclass
class Notebook:
    document: dict  # the parsed JSON, edited in place when fixes are written back
    text: str  # the file as read, to find the JSON layout that reproduces it
    cells: list[int]  # indices into document["cells"] of the checked code cells, in order
    program: str
    # For each program line (0-based): (1-based code cell number, 1-based line in that cell);
    # marker lines map to None.
    line_map: list[Optional[tuple[int, int]]]
    cell_marker: str = CELL_MARKER  # the markers this notebook's program uses
    magic_prefix: str = MAGIC_PREFIX


def read_notebook(data: bytes | str) -> Notebook:
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        document = json.loads(text)
    except ValueError as exc:  # not UTF-8, not JSON, or a number too long to convert
        raise NotebookError(f"not a notebook: invalid JSON ({one_line(str(exc))})") from None
    except RecursionError:
        raise NotebookError(f"not a notebook: JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    if _nesting_exceeds(document, MAX_JSON_DEPTH):
        raise NotebookError(f"not a notebook: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        raise NotebookError("not a notebook: no list of cells")
    metadata = document.get("metadata")
    language = metadata.get("language_info") if isinstance(metadata, dict) else None
    if isinstance(language, dict) and language.get("name") not in (None, "python"):
        raise NotebookError(f"not a Python notebook (language {language.get('name')!r})")
    cells: list[int] = []
    sources: list[str] = []
    for index, cell in enumerate(document["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _cell_text(cell)
        if source is None:
            raise NotebookError(f"not a notebook: cell {index + 1} has no readable source")
        cells.append(index)
        sources.append(source)
    cell_marker, magic_prefix = _unused_marker(CELL_MARKER, sources), _unused_marker(MAGIC_PREFIX, sources)
    pieces: list[str] = []
    line_map: list[Optional[tuple[int, int]]] = []
    for number, source in enumerate(sources, start=1):
        lines = source.split("\n")
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()  # the cell's final newline; an empty cell keeps its one empty line
        skip_all = _is_foreign_cell_magic(lines)
        ipython = set(range(len(lines))) if skip_all else _ipython_lines(lines)
        if number > 1:
            pieces.append(cell_marker)
            line_map.append(None)
        for row, line in enumerate(lines, start=1):
            pieces.append(magic_prefix + line if row - 1 in ipython else line)
            line_map.append((number, row))
    program = "\n".join(pieces) + "\n" if pieces else ""
    return Notebook(document, text, cells, program, line_map, cell_marker, magic_prefix)


def _unused_marker(marker: str, sources: Sequence[str]) -> str:
    """`marker`, or `marker` numbered (`#ddplint-ipython-2: `) until no cell contains it: a line
    that starts with it after fixing can then only be one ddplint put there."""
    stem, colon, space = marker.partition(":")
    candidate, number = marker, 1
    while any(candidate in source for source in sources):
        number += 1
        candidate = f"{stem}-{number}{colon}{space}"
    return candidate


def _ipython_lines(lines: list[str]) -> set[int]:
    """Indices of the lines IPython would take as magics, shell escapes or help: those starting
    with `%`, `!` or `?` (or `name?`) where a statement may start, i.e. not inside brackets, a
    triple-quoted string or after a backslash (`x = (a\n     % b)` is Python)."""
    found: set[int] = set()
    depth, quote, continued = 0, None, False
    escape_continues = False  # a shell escape or magic whose line ends with a backslash goes on
    for index, line in enumerate(lines):
        if escape_continues:
            found.add(index)
            escape_continues = line.rstrip().endswith("\\")
            continue
        at_statement_start = depth == 0 and quote is None and not continued
        if at_statement_start and _is_ipython_line(line):
            found.add(index)
            escape_continues = line.rstrip().endswith("\\")
            continue
        depth, quote, continued = _scan(line, depth, quote)
    return found


def _is_ipython_line(line: str) -> bool:
    if line.lstrip().startswith(("%", "!")) or _HELP_LINE.match(line) or _ASSIGNED_ESCAPE.match(line):
        return True
    return _is_automagic(line)


def _is_automagic(line: str) -> bool:
    words = line.split(None, 1)
    if len(words) < 2 or words[0] not in _AUTOMAGIC_WORDS or line[:1].isspace():
        return False
    depth, quote, continued = _scan(line, 0, None)
    if depth or quote or continued:
        return False  # the start of a longer statement: Python's to judge
    try:
        compile(line, "<cell line>", "exec")  # only compiled, never run
    except SyntaxError:
        return True
    return False


def _scan(line: str, depth: int, quote: Optional[str]) -> tuple[int, Optional[str], bool]:
    """Bracket depth, open triple-quoted string and backslash continuation after `line`."""
    i = 0
    while i < len(line):
        ch = line[i]
        if quote is not None:
            if ch == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = None
                continue
            i += 1
            continue
        if ch == "#":
            return depth, None, False
        if ch in "\"'":
            quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else ch
            i += len(quote)
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        i += 1
    if quote in ('"', "'"):
        quote = None  # an unterminated one-line string: a syntax error Python will report
    return depth, quote, line.endswith("\\") and quote is None


def _cell_text(cell: dict) -> Optional[str]:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    return source if isinstance(source, str) else None


def _is_foreign_cell_magic(lines: list[str]) -> bool:
    """`%%bash`, `%%writefile x.py`, ...: the cell is not Python (or not run here)."""
    first = next((line.strip() for line in lines if line.strip()), "")
    if not first.startswith("%%"):
        return False
    name = first[2:].split(maxsplit=1)[0] if first[2:].strip() else ""
    return name not in PYTHON_CELL_MAGICS


def _detect_format(text: str, document: dict) -> dict[str, Any]:
    """The json.dumps settings that reproduce the file exactly (nbformat's first), else {}."""
    for indent in (1, 2, 4, None):
        for sort_keys in (True, False):
            for ensure_ascii in (False, True):
                settings: dict[str, Any] = {"indent": indent, "sort_keys": sort_keys, "ensure_ascii": ensure_ascii}
                dumped = json.dumps(document, **settings)
                if dumped == text or dumped + "\n" == text:
                    return {**settings, "newline": dumped + "\n" == text}
    return {}


# -- checking --------------------------------------------------------------------------------------
def lint_notebook(
    data: bytes | str, filename: str, lint: Callable[[str], list[Diagnostic]]
) -> list[Diagnostic]:
    """Diagnostics located as (cell, line in cell). `lint` checks the program as a Python file."""
    try:
        notebook = read_notebook(data)
    except NotebookError as exc:
        return [error_diagnostic(filename, str(exc))]
    return [to_cells(d, notebook) for d in lint(notebook.program)]


def to_cells(diagnostic: Diagnostic, notebook: Notebook) -> Diagnostic:
    cell, start = _cell_location(notebook, diagnostic.location)
    end_cell, end = _cell_location(notebook, diagnostic.end_location)
    if end_cell != cell:
        end = Location(start.row, start.column + 1)
    fix = diagnostic.fix
    if fix is not None:
        fix = _fix_in_cell(fix, notebook, cell)
    return Diagnostic(
        diagnostic.code, diagnostic.message, diagnostic.filename, start, end, fix, diagnostic.severity, cell,
        diagnostic.explanation,
    )


def _cell_location(notebook: Notebook, location: Location) -> tuple[int, Location]:
    index = location.row - 1
    mapped = notebook.line_map[index] if 0 <= index < len(notebook.line_map) else None
    if mapped is None:  # a marker line or past the end: point at the next real line
        following = [m for m in notebook.line_map[max(index, 0):] if m is not None]
        mapped = following[0] if following else (max(len(notebook.cells), 1), 1)
        return mapped[0], Location(mapped[1], 1)
    return mapped[0], Location(mapped[1], location.column)


def _fix_in_cell(fix: Fix, notebook: Notebook, cell: int) -> Optional[Fix]:
    """The fix in cell coordinates when all of it lands in that cell; otherwise None here (the
    notebook's `--fix` still applies it, through the whole program)."""
    edits = []
    for edit in fix.edits:
        start_cell, start = _cell_location(notebook, edit.location)
        end_cell, end = _cell_location(notebook, edit.end_location)
        if start_cell != cell or end_cell != cell:
            return None
        edits.append(Edit(edit.content, start, end))
    return Fix(fix.message, tuple(edits), fix.applicability)


def cell_source(path: Path, cell: int) -> Optional[str]:
    """The text of a code cell (1-based among code cells), for showing source lines."""
    try:
        notebook = read_notebook(read_file(path))  # OSError: the caller's to handle
    except NotebookError:
        return None
    if not 1 <= cell <= len(notebook.cells):
        return None
    return _cell_text(notebook.document["cells"][notebook.cells[cell - 1]])


# -- writing fixes back ------------------------------------------------------------------------------
def write_program(notebook: Notebook, program: str) -> str:
    """The notebook's text with the code cells replaced by a fixed program's pieces. Raises
    NotebookError when that cannot be done without reformatting the rest of the file."""
    layout = _detect_format(notebook.text, notebook.document)  # before any cell changes
    if not layout:
        raise NotebookError("cannot write fixes back without reformatting the notebook (unusual JSON layout)")
    pieces = program.split("\n" + notebook.cell_marker + "\n") if program else []
    if len(pieces) != len(notebook.cells):
        raise NotebookError("cannot write fixes back: a fix moved a cell boundary")
    if pieces:
        pieces[-1] = pieces[-1][:-1]  # the program's own final newline
    for index, piece in zip(notebook.cells, pieces):
        cell = notebook.document["cells"][index]
        old = _cell_text(cell) or ""
        new = _restore_ipython_lines(piece, notebook.magic_prefix) + ("\n" if old.endswith("\n") else "")
        if new != old:
            cell["source"] = new.splitlines(keepends=True) if isinstance(cell.get("source"), list) else new
    settings = dict(layout)
    newline = settings.pop("newline")
    return json.dumps(notebook.document, **settings) + ("\n" if newline else "")


def _restore_ipython_lines(piece: str, prefix: str) -> str:
    lines = piece.split("\n")
    return "\n".join(line[len(prefix):] if line.startswith(prefix) else line for line in lines)


def fix_notebook(
    data: bytes | str, fix_program: Callable[[str], str]
) -> str:
    """The notebook text after `fix_program` (the fix loop over Python source) ran on its cells."""
    notebook = read_notebook(data)
    fixed = fix_program(notebook.program)
    if fixed == notebook.program:
        return data.decode("utf-8") if isinstance(data, bytes) else data
    return write_program(notebook, fixed)


__all__: Sequence[str] = ("NotebookError", "cell_source", "fix_notebook", "lint_notebook", "read_notebook")
