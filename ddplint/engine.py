"""Discover files, screen them, parse each once, run the rules, apply `# noqa`.

`lint_source()` is the single entry point every front end uses (CLI today, LSP and verify later);
`lint_paths()` adds discovery and keeps going past any bad file.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Optional, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ddplint.analysis import build_facts
from ddplint.analysis.distributed import DISTRIBUTED_TOKENS
from ddplint.analysis.project import ProjectIndex
from ddplint.diagnostics import Diagnostic, Location
from ddplint.rules import ERROR_CODE, Finding, Rule, select_rules

# Directory names never worth descending into (ruff's defaults, trimmed to what occurs here).
EXCLUDED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".tox", ".nox", ".eggs", "__pycache__",
        "__pypackages__", "build", "dist", "node_modules", "site-packages", ".mypy_cache",
        ".pytest_cache", ".ruff_cache", ".ddplint_cache", ".ipynb_checkpoints",
    }
)

# Deeper syntax trees than this are refused: real code stays far below (a few dozen levels), and
# libcst's native parser overflows the C stack somewhere past a few thousand.
MAX_NESTING = 500

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"#\s*ddplint:\s*noqa\b", re.IGNORECASE)


@dataclass(frozen=True)
class InternalError:
    """A rule that crashed on a file: reported, never fatal to the run."""

    filename: str
    code: str
    detail: str


def lint_source(
    source: bytes | str,
    filename: str = "<stdin>",
    rules: Optional[Sequence[Rule]] = None,
    errors: Optional[list[InternalError]] = None,
    project: Optional[ProjectIndex] = None,
) -> list[Diagnostic]:
    """Check one file's contents. Never raises for anything in the source.

    `project`: the files checked together with this one (cross-module flow). The result then
    also depends on the files `project.dependencies(filename)` lists."""
    rules = select_rules() if rules is None else rules
    data = source.encode("utf-8") if isinstance(source, str) else source
    distributed = _mentions_any(data, DISTRIBUTED_TOKENS)
    # A file that imports the project's own modules may get its loader or process group from
    # them without a single trigger word of its own: it skips the token screens.
    linked = project is not None and project.may_import_project(filename, data)
    active = [
        r for r in rules if linked or (_mentions_any(data, r.triggers) and (distributed or not r.distributed_only))
    ]
    if not active:
        return []  # the common case: nothing here any selected rule could care about
    problem = _unparsable(data, filename)
    if problem is not None:
        return [problem]
    try:
        module = cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        return [_error(filename, f"syntax error: {_one_line(exc.message)}", exc.raw_line, exc.raw_column + 1)]
    except Exception as exc:  # libcst raises a few other types on exotic input
        return [_error(filename, f"cannot parse: {type(exc).__name__}: {_one_line(str(exc))}")]
    # Decoding ourselves: `module.code` would regenerate the whole source (a full codegen pass).
    text = data.decode(module.encoding, errors="replace")
    if _FILE_NOQA.search(text):
        return []
    try:
        facts = build_facts(module, text, project.view_for(filename) if linked else None)
    except RecursionError:
        return [_error(filename, "cannot analyse: code nested too deeply")]
    findings: list[Finding] = []
    for rule in active:
        try:
            findings.extend(rule.check(facts))
        except Exception as exc:  # a bug in one rule must not hide the others' findings
            detail = f"internal error in {rule.code} ({rule.name}): {type(exc).__name__}: {_one_line(str(exc))}"
            if errors is not None:
                errors.append(InternalError(filename, rule.code, detail))
    if not findings:
        return []
    try:
        return _locate(findings, module, text, filename)
    except RecursionError:
        return [_error(filename, "cannot locate findings: code nested too deeply")]


def _unparsable(data: bytes, filename: str) -> Optional[Diagnostic]:
    """Screen with CPython's own parser first. It is 8x cheaper than libcst, its messages are the
    ones users know, and it turns pathological nesting into a RecursionError/MemoryError, where
    libcst's native parser would overflow the C stack and kill the whole process."""
    try:
        tree = compile(data, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        reason = "cannot decode file" if "decod" in str(exc.msg) or "encoding" in str(exc.msg) else "syntax error"
        return _error(filename, f"{reason}: {_one_line(str(exc.msg))}", exc.lineno or 1, exc.offset or 1)
    except (RecursionError, MemoryError):
        return _error(filename, "cannot parse: code nested too deeply")
    except (ValueError, UnicodeDecodeError, LookupError) as exc:
        return _error(filename, f"cannot decode file: {_one_line(str(exc))}")
    # Python < 3.11 parses a 20,000-term `1+1+...` happily; libcst would not survive it.
    if _nesting_exceeds(tree, MAX_NESTING):
        return _error(filename, f"cannot parse: code nested too deeply (over {MAX_NESTING} levels)")
    return None


def _nesting_exceeds(tree: ast.AST, limit: int) -> bool:
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False


def _locate(findings: list[Finding], module: cst.Module, text: str, filename: str) -> list[Diagnostic]:
    # Positions cost a full extra pass, so they are resolved only for files that have findings.
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lines = text.splitlines()
    out = []
    for finding in findings:
        start = positions[finding.node].start
        end = positions[_header(finding.node)].end
        if _suppressed(lines, start.line, finding.code):
            continue
        out.append(
            Diagnostic(
                code=finding.code,
                message=finding.message,
                filename=filename,
                location=Location(start.line, start.column + 1),
                end_location=Location(end.line, end.column + 1),
                severity=finding.severity,
            )
        )
    return sorted(set(out), key=lambda d: d.sort_key)


def _header(node: cst.CSTNode) -> cst.CSTNode:
    """For a compound statement, the part users think of as "the line": its header."""
    if isinstance(node, (cst.For, cst.CompFor)):
        return node.iter
    if isinstance(node, (cst.While, cst.If)):
        return node.test
    return node


def _suppressed(lines: list[str], row: int, code: str) -> bool:
    if not 0 < row <= len(lines):
        return False
    match = _NOQA.search(lines[row - 1])
    if match is None:
        return False
    codes = match.group("codes")
    return codes is None or code in {c.strip().upper() for c in codes.split(",")}


def _mentions_any(data: bytes, triggers: Iterable[bytes]) -> bool:
    return any(trigger in data for trigger in triggers)


def _error(filename: str, message: str, row: int = 1, column: int = 1) -> Diagnostic:
    location = Location(max(row, 1), max(column, 1))
    return Diagnostic(ERROR_CODE, message, filename, location, location)


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


# -- files ------------------------------------------------------------------------------------
def discover(paths: Sequence[str]) -> Iterator[tuple[str, Optional[str]]]:
    """(path, problem) for every file to check: explicit files as given, `.py` files under
    directories (excluded directories skipped), sorted for a stable order."""
    for given in paths:
        path = Path(given)
        if path.is_dir():
            yield from ((str(p), None) for p in sorted(_walk_python_files(path)))
        elif path.exists() or path.is_symlink():
            yield given, None
        else:
            yield given, "no such file or directory"


def _walk_python_files(root: Path) -> Iterator[Path]:
    for directory, subdirs, files in os.walk(root, followlinks=False):
        subdirs[:] = [d for d in subdirs if d not in EXCLUDED_DIRS and not _is_virtualenv(Path(directory, d))]
        for name in files:
            if name.endswith((".py", ".pyi")):
                yield Path(directory, name)


def _is_virtualenv(path: Path) -> bool:
    return (path / "pyvenv.cfg").exists()


def lint_file(
    path: str,
    rules: Sequence[Rule],
    errors: Optional[list[InternalError]] = None,
    project: Optional[ProjectIndex] = None,
) -> list[Diagnostic]:
    try:
        data = Path(path).read_bytes()
    except IsADirectoryError:
        return [_error(path, "cannot read: is a directory")]
    except OSError as exc:
        return [_error(path, f"cannot read: {exc.strerror or type(exc).__name__}")]
    return lint_source(data, path, rules, errors, project)


def lint_paths(
    paths: Sequence[str],
    rules: Optional[Sequence[Rule]] = None,
    errors: Optional[list[InternalError]] = None,
) -> Iterator[Diagnostic]:
    """Diagnostics for every file under `paths`, file by file in a stable order."""
    rules = select_rules() if rules is None else rules
    found = list(discover(paths))
    # Cross-module flow: files checked together see each other's summaries (analysis/project.py).
    project = ProjectIndex([path for path, problem in found if problem is None]) if len(found) > 1 else None
    for path, problem in found:
        if problem is not None:
            yield _error(path, problem)
            continue
        yield from lint_file(path, rules, errors, project)
