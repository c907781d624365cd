"""Discover files, screen them, parse each once, run the rules, apply `# noqa`.

`lint_source()` is the single entry point every front end uses (CLI today, LSP and verify later);
`lint_paths()` adds discovery and keeps going past any bad file.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Optional, Protocol, Sequence

import libcst as cst
from libcst.metadata import CodeRange

from ddplint.analysis import build_facts
from ddplint.analysis.project import ProjectIndex
from ddplint.cache import FileStamp, ResultCache, content_hash
from ddplint.diagnostics import Diagnostic, Location
from ddplint.fix import locate_fix
from ddplint.positions import positions_of
from ddplint.recovery import SYNTAX_ERROR_PREFIX, recover
from ddplint.rules import ERROR_CODE, RULES_BY_CODE, Finding, Rule, select_rules
from ddplint.screen import candidates_by_bytes, candidates_by_names, compile_screen

# Directory names never worth descending into (ruff's defaults, trimmed to what occurs here).
EXCLUDED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".tox", ".nox", ".eggs", "__pycache__",
        "__pypackages__", "build", "dist", "node_modules", "site-packages", ".mypy_cache",
        ".pytest_cache", ".ruff_cache", ".ddplint_cache", ".ipynb_checkpoints",
    }
)

# libcst holds ~500 bytes of tree per byte of source: a 2 MB file already costs ~1 GB. Hand-written
# code stays far below (the largest file in the torch package is 1.1 MB, and it is a stub); only
# generated tables get there, and they hold no training loop.
MAX_ANALYSED_BYTES = 2 * 10**6

# Found under directories. Not `.pyi`: stubs hold signatures, never the calls any rule looks at;
# named on the command line, they are still checked.
SOURCE_SUFFIXES = (".py", ".ipynb")

# `# noqa`, `#noqa:DDP001`, `# noqa: DDP001, DDP002` (the LSP's noqa editing reads the same grammar).
NOQA = re.compile(r"#\s*noqa(?P<colon>:\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_FILE_NOQA = re.compile(r"#\s*ddplint:\s*noqa\b", re.IGNORECASE)


class Parser(Protocol):
    """libcst's parse and positions (positions.positions_of), however they are obtained."""

    def parse(self, data: bytes) -> cst.Module: ...

    def positions(self, module: cst.Module, nodes: Iterable[cst.CSTNode]) -> Mapping[cst.CSTNode, CodeRange]: ...


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
    parser: Optional[Parser] = None,
) -> list[Diagnostic]:
    """Check one file's contents. Never raises for anything in the source.

    `project`: the files checked together with this one (cross-module flow). The result then
    also depends on the files `project.dependencies(filename)` lists. `parser`: one that gives
    libcst's tree and positions faster (the language server's, lsp/incremental.py)."""
    rules = select_rules() if rules is None else rules
    data = source.encode("utf-8") if isinstance(source, str) else source
    active = candidates_by_bytes(data, rules)
    # A file may get its loader or process group from the project's own modules without a
    # single trigger word of its own: then what it imports decides.
    linked = bool(active) or (project is not None and project.may_import_project(filename, data))
    if not linked:
        return []  # the common case: nothing here any selected rule could care about
    if len(data) > MAX_ANALYSED_BYTES:
        size = f"{len(data) / 1e6:.1f} MB"
        return [_error(filename, f"not analysed: {size} is over the {MAX_ANALYSED_BYTES // 10**6} MB limit (generated code?)")]
    problem, names = compile_screen(data, filename)
    recovered = recover(data, filename) if problem is not None and problem.is_syntax_error else None
    if recovered is not None:  # analyse all but the statements that do not parse; each gets a DDP000
        broken = [_error(filename, SYNTAX_ERROR_PREFIX + _one_line(b.message), b.row, b.column) for b in recovered.broken]
        return sorted(broken + lint_source(recovered.data, filename, rules, errors, project, parser), key=lambda d: d.sort_key)
    if problem is not None:
        return [_error(filename, _one_line(problem.reason), problem.row, problem.column)]
    active = candidates_by_names(active, data, names)
    if not active and project is not None and not names.isdisjoint(project.exported_names(filename, data)):
        active = list(rules)  # it uses what a project module offers: every rule may apply
    if not active:
        return []
    try:
        module = parser.parse(data) if parser is not None else cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        return [_error(filename, f"syntax error: {_one_line(exc.message)}", exc.raw_line, exc.raw_column + 1)]
    except Exception as exc:  # libcst raises a few other types on exotic input
        return [_error(filename, f"cannot parse: {type(exc).__name__}: {_one_line(str(exc))}")]
    # Decoding ourselves: `module.code` would regenerate the whole source (a full codegen pass).
    text = data.decode(module.encoding, errors="replace")
    if _FILE_NOQA.search(text):
        return []
    try:
        facts = build_facts(module, text, project.view_for(filename) if project is not None else None)
    except RecursionError:
        return [_error(filename, "cannot analyse: code nested too deeply")]
    findings: list[Finding] = []
    for rule in active:
        try:
            findings.extend(rule.check(facts))
        except RecursionError:  # deep but valid code (a 600-link attribute chain): say so, once
            return [_error(filename, "cannot analyse: code nested too deeply")]
        except Exception as exc:  # a bug in one rule must not hide the others' findings
            detail = f"internal error in {rule.code} ({rule.name}): {type(exc).__name__}: {_one_line(str(exc))}"
            if errors is not None:
                errors.append(InternalError(filename, rule.code, detail))
    if not findings:
        return []
    try:
        return _locate(findings, module, text, filename, parser.positions if parser is not None else positions_of)
    except RecursionError:
        return [_error(filename, "cannot locate findings: code nested too deeply")]


def _locate(findings: list[Finding], module: cst.Module, text: str, filename: str, locate=positions_of) -> list[Diagnostic]:
    # Positions are resolved only for files that have findings, and only for the nodes named.
    positions = locate(module, _anchors(findings))
    lines = _LINE_BREAK.split(text)  # Python's line breaks only: str.splitlines also splits at \f
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
                fix=locate_fix(finding.fix, positions, text) if finding.fix is not None else None,
            )
        )
    return sorted(set(out), key=lambda d: d.sort_key)


def _anchors(findings: list[Finding]) -> Iterator[cst.CSTNode]:
    for finding in findings:
        yield finding.node
        yield _header(finding.node)
        for edit in finding.fix.edits if finding.fix is not None else ():
            yield edit.node
            if edit.end is not None:
                yield edit.end


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
    match = NOQA.search(lines[row - 1])
    if match is None:
        return False
    codes = match.group("codes")
    return codes is None or code in {c.strip().upper() for c in codes.split(",")}


def _error(filename: str, message: str, row: int = 1, column: int = 1) -> Diagnostic:
    location = Location(max(row, 1), max(column, 1))
    return Diagnostic(ERROR_CODE, message, filename, location, location)


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


# -- files ------------------------------------------------------------------------------------
def discover(
    paths: Sequence[str], is_excluded: Optional[Callable[[Path], bool]] = None, force_exclude: bool = False
) -> Iterator[tuple[str, Optional[str]]]:
    """(path, problem) for every file to check: explicit files as given (unless `force_exclude`
    and excluded), `.py`/`.ipynb` files under directories (excluded ones skipped), sorted
    for a stable order. `is_excluded` comes from the configuration (config.Settings.is_excluded)."""
    for given in paths:
        path = Path(given)
        if path.is_dir():
            yield from ((str(p), None) for p in sorted(_walk_source_files(path, is_excluded)))
        elif path.exists() or path.is_symlink():
            if not (force_exclude and is_excluded is not None and is_excluded(path)):
                yield given, None
        else:
            yield given, "no such file or directory"


def _walk_source_files(root: Path, is_excluded: Optional[Callable[[Path], bool]] = None) -> Iterator[Path]:
    for directory, subdirs, files in os.walk(root, followlinks=False):
        subdirs[:] = [
            d
            for d in subdirs
            if not _is_virtualenv(Path(directory, d))
            and (d not in EXCLUDED_DIRS if is_excluded is None else not is_excluded(Path(directory, d)))
        ]
        for name in files:
            if name.endswith(SOURCE_SUFFIXES) and (is_excluded is None or not is_excluded(Path(directory, name))):
                yield Path(directory, name)


def _is_virtualenv(path: Path) -> bool:
    return (path / "pyvenv.cfg").exists()


def lint_file(
    path: str,
    rules: Sequence[Rule],
    errors: Optional[list[InternalError]] = None,
    project: Optional[ProjectIndex] = None,
) -> list[Diagnostic]:
    data, problem = _read(path)
    if problem is not None:
        return [problem]
    return lint_document(data, path, rules, errors, project)


def lint_document(
    data: bytes | str,
    filename: str,
    rules: Sequence[Rule],
    errors: Optional[list[InternalError]] = None,
    project: Optional[ProjectIndex] = None,
) -> list[Diagnostic]:
    """A file's contents, Python or notebook by its name (stdin goes through here too)."""
    if filename.endswith(".ipynb"):
        from ddplint.notebook import lint_notebook

        return lint_notebook(data, filename, lambda program: lint_source(program, filename, rules, errors, project))
    return lint_source(data, filename, rules, errors, project)


def _read(path: str) -> tuple[bytes, Optional[Diagnostic]]:
    try:
        return Path(path).read_bytes(), None
    except IsADirectoryError:
        return b"", _error(path, "cannot read: is a directory")
    except OSError as exc:  # unreadable, deleted during the run, a symlink loop or a broken link
        return b"", _error(path, f"cannot read: {exc.strerror or type(exc).__name__}")


def lint_paths(
    paths: Sequence[str],
    rules: Optional[Sequence[Rule]] = None,
    errors: Optional[list[InternalError]] = None,
    rules_for: Optional[Callable[[str], Sequence[Rule]]] = None,
    is_excluded: Optional[Callable[[Path], bool]] = None,
    force_exclude: bool = False,
    *,
    jobs: Optional[int] = None,
    cache: Optional[ResultCache] = None,
) -> Iterator[Diagnostic]:
    """Diagnostics for every file under `paths`, file by file in a stable (discovery) order,
    streamed as soon as each file and all before it are done. `rules_for` (per-file
    configuration) overrides `rules` when given. `jobs` worker processes (default: one per
    available core); `cache` skips files whose results are known."""
    rules = select_rules() if rules is None else rules
    found = list(discover(paths, is_excluded, force_exclude))
    # Cross-module flow: files checked together see what each other offers (analysis/project.py).
    readable = [path for path, problem in found if problem is None]
    project = ProjectIndex(readable) if len(readable) > 1 else None
    slots: list[object] = []  # per file, in order: its diagnostics, or a _Job still to run
    for path, problem in found:
        if problem is not None:
            slots.append([_error(path, problem)])
            continue
        codes = tuple(rule.code for rule in (rules if rules_for is None else rules_for(path)))
        rules_key = ",".join(codes)
        stamp = FileStamp.of(path)
        known = cache.by_stamp(path, stamp, rules_key, project) if cache is not None else None
        if known is not None:
            slots.append(known)
            continue
        expected = cache.known_hash(path, rules_key, project) if cache is not None else None
        slots.append(_Job(len(slots), path, codes, rules_key, stamp, expected, want_hash=cache is not None))
    for slot, outcome in _run(slots, jobs, project):
        if isinstance(slot, list):
            yield from slot
            continue
        diagnostics = outcome.diagnostics
        if outcome.unchanged and cache is not None:
            diagnostics = cache.by_content(slot.path, outcome.digest, slot.stamp, slot.rules_key, project)
            if diagnostics is None:  # the entry went stale meanwhile (a project file changed): check it here
                diagnostics = lint_file(slot.path, [RULES_BY_CODE[c] for c in slot.codes], errors, project)
        elif cache is not None and outcome.digest and not outcome.errors:
            cache.store(slot.path, outcome.digest, slot.stamp, slot.rules_key, diagnostics, outcome.import_words, project)
        if errors is not None:
            errors.extend(outcome.errors)
        yield from diagnostics


@dataclass(frozen=True)
class _Job:
    """One file to check in a worker process (plain data: it crosses a process boundary)."""

    index: int
    path: str
    codes: tuple[str, ...]
    rules_key: str
    stamp: Optional[FileStamp]
    expected_hash: Optional[str]  # the cached content hash: equal means "unchanged, skip"
    want_hash: bool


@dataclass(frozen=True)
class _Outcome:
    diagnostics: list[Diagnostic]
    errors: list[InternalError]
    digest: str = ""
    unchanged: bool = False
    import_words: tuple[str, ...] = ()  # module names its imports mention: what its result may depend on


# The project index of the run, for worker processes (set before they start, so fork shares it).
_PROJECT: Optional[ProjectIndex] = None


def _set_project(project: Optional[ProjectIndex]) -> None:
    global _PROJECT
    _PROJECT = project


def _check_job(job: _Job) -> tuple[int, _Outcome]:
    data, problem = _read(job.path)
    if problem is not None:
        return job.index, _Outcome([problem], [])
    digest = content_hash(data) if job.want_hash else ""
    if digest and digest == job.expected_hash:
        return job.index, _Outcome([], [], digest, unchanged=True)
    errors: list[InternalError] = []
    diagnostics = lint_document(data, job.path, [RULES_BY_CODE[code] for code in job.codes], errors, _PROJECT)
    import_words = tuple(_PROJECT.import_words(data)) if _PROJECT is not None else ()
    return job.index, _Outcome(diagnostics, errors, digest, import_words=import_words)


def _run(
    slots: list[object], jobs: Optional[int], project: Optional[ProjectIndex]
) -> Iterator[tuple[object, Optional[_Outcome]]]:
    """Each slot with its outcome, in slot order. Jobs go to a process pool largest file first (a
    big file started last would leave one core busy alone at the end); results are held back
    until every earlier slot has been yielded, so output order never depends on timing."""
    pending = [slot for slot in slots if isinstance(slot, _Job)]
    workers = min(jobs or available_cores(), len(pending))
    if workers <= 1:
        _set_project(project)
        try:
            for slot in slots:
                yield slot, (_check_job(slot)[1] if isinstance(slot, _Job) else None)
        finally:
            _set_project(None)
        return
    pending.sort(key=lambda job: job.stamp.size if job.stamp else 0, reverse=True)
    done: dict[int, _Outcome] = {}
    with _pool(workers, project) as pool:
        results = pool.imap_unordered(_check_job, pending, chunksize=_chunk_size(len(pending), workers))
        for index, slot in enumerate(slots):
            if not isinstance(slot, _Job):
                yield slot, None
                continue
            while index not in done:
                finished, outcome = next(results)
                done[finished] = outcome
            yield slot, done.pop(index)


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what this process may use (containers, taskset)
    except AttributeError:
        return os.cpu_count() or 1


def _chunk_size(count: int, workers: int) -> int:
    # Small chunks balance the load; a few files per message keeps the pipe traffic low.
    return max(1, min(16, count // (workers * 16)))


def _pool(workers: int, project: Optional[ProjectIndex]):
    # fork starts workers in milliseconds with ddplint already imported; elsewhere (macOS,
    # Windows) the platform's safe default. Each worker summarises project modules on demand.
    method = "fork" if sys.platform.startswith("linux") else None
    return multiprocessing.get_context(method).Pool(workers, initializer=_set_project, initargs=(project,))
