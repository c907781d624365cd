"""One file's source in, located findings out: screen it, parse it once, run the rules, apply `# noqa`.

`lint_source()` is the single entry point for Python source; `ddplint.api` builds files,
notebooks, discovery, worker processes and the cache on top of it. The engine imports nothing
above it: fixes are located here (`ddplint.edits`) but applied by `ddplint.fix`.
"""

from __future__ import annotations

import re
import sys
import threading
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping, Optional, Protocol, Sequence, TypeVar

import libcst as cst
from libcst.metadata import CodeRange

from ddplint.analysis import build_facts
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.options import NO_OPTIONS, AnalysisOptions
from ddplint.analysis.project import ProjectIndex
from ddplint.analysis.syntax import parse_module
from ddplint.diagnostics import Diagnostic, InternalError, Location
from ddplint.diagnostics import error_diagnostic as _error  # short local names: the checks read as before
from ddplint.diagnostics import one_line as _one_line
from ddplint.edits import locate_fix
from ddplint.positions import positions_of
from ddplint.rules import select_rules
from ddplint.rules.base import Finding, Rule
from ddplint.screen import Unparsable, compile_screen, rules_to_run
from ddplint.source import is_notebook, parser_bytes, split_lines

if TYPE_CHECKING:  # only named in the Parser protocol
    from ddplint.analysis.facts import StatementFacts

# A noqa comment, bare or with codes after a colon (one code, or several split by commas); the
# language server reads the same grammar when it edits these comments.
NOQA = re.compile(r"#\s*noqa(?P<colon>:\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.IGNORECASE)
FILE_NOQA = re.compile(r"#\s*ddplint:\s*noqa\b", re.IGNORECASE)


class Parser(Protocol):
    """The compile screen (screen.compile_screen), libcst's parse and positions
    (positions.positions_of), however they are obtained; and, where its modules share the nodes
    of statements met before, their facts to reuse."""

    statement_facts: Optional[StatementFacts]

    def screen(self, data: bytes, filename: str) -> tuple[Optional[Unparsable], frozenset[str]]: ...

    def parse(self, data: bytes) -> cst.Module: ...

    def positions(self, module: cst.Module, nodes: Iterable[cst.CSTNode]) -> Mapping[cst.CSTNode, CodeRange]: ...


def lint_source(
    source: bytes | str,
    filename: str = "<stdin>",
    rules: Optional[Sequence[Rule]] = None,
    errors: Optional[list[InternalError]] = None,
    project: Optional[ProjectIndex] = None,
    parser: Optional[Parser] = None,
    options: AnalysisOptions = NO_OPTIONS,
) -> list[Diagnostic]:
    """Check one file's contents. Never raises for anything in the source.

    `project`: the files checked together with this one (cross-module flow). The result then
    also depends on the files `project.dependencies(filename)` lists. `parser`: one that gives
    libcst's tree and positions faster (the language server's, lsp/incremental.py). `options`:
    what the file's configuration declares (rank-zero-functions, sharded-loader-factories)."""
    rules = select_rules() if rules is None else rules
    data = parser_bytes(source) if isinstance(source, str) else source  # columns of this very text
    screened = rules_to_run(data, filename, rules, project, options, parser.screen if parser is not None else compile_screen)
    found = _analysed_at_any_depth(screened.data, filename, screened.rules, errors, project, parser, options) if screened.rules else []
    if not screened.problems:
        return found
    reported = [_error(filename, problem.reason, problem.row, problem.column) for problem in screened.problems]
    return sorted(reported + found, key=lambda d: d.sort_key)


# Deep but valid code takes more Python frames to analyse than the default recursion limit (1,000)
# allows: libcst's parser output, visitors and code generation recurse a few frames per level, and
# a level is cheap to write (each of 500 adjacent string literals nests one level in libcst's tree;
# CPython >= 3.11 compiles expressions ~3,000 levels deep, which took ~10,000 frames here). Such a
# file is analysed again on a thread of its own, under a recursion limit its stack can hold: a
# limit the stack cannot hold turns a RecursionError into a segfault. The limit is derived from
# the stack: Python 3.11 counts C-level and Python-level recursion together, and a counted level
# of this work was measured under 1 kB of C stack; WORST_FRAME_BYTES allows 13 times that. libcst's
# native parser recurses uncounted, but only over code the screen let through (nesting bounded
# independently of the limit, screen.py), which takes ~4.5 MB at most.
DEEP_STACK_BYTES = 256 * 2**20
WORST_FRAME_BYTES = 13 * 2**10
DEEP_RECURSION_LIMIT = DEEP_STACK_BYTES // WORST_FRAME_BYTES  # 20,164
# The stack size is set for the next thread started, process-wide; the recursion limit is the
# interpreter's, shared by every thread: raised while any deep analysis runs, restored when the
# last one ends (two overlapping runs each restoring "their" saved value left it raised for good).
_DEEP_STACK = threading.Lock()
_deep_runs = 0
_limit_before_deep_runs = 0


def _analysed_at_any_depth(
    data: bytes,
    filename: str,
    active: Sequence[Rule],
    errors: Optional[list[InternalError]],
    project: Optional[ProjectIndex],
    parser: Optional[Parser],
    options: AnalysisOptions,
) -> list[Diagnostic]:
    def analyse() -> tuple[list[Diagnostic], list[InternalError]]:
        return _analysed(data, filename, active, project, parser, options)

    try:
        diagnostics, failures = analyse()
    except RecursionError:
        try:
            diagnostics, failures = on_deep_stack(analyse)
        except RecursionError:
            return [_error(filename, "cannot analyse: code nested too deeply")]
    if errors is not None:
        errors.extend(failures)
    return diagnostics


T = TypeVar("T")


def on_deep_stack(work: Callable[[], T]) -> T:
    """`work()`, run on a thread with a stack for DEEP_RECURSION_LIMIT frames and that limit in
    force while it runs; its exception, if any, raised here. RecursionError where no such thread
    can be started."""
    outcome: list[tuple[bool, object]] = []

    def run() -> None:
        try:
            outcome.append((True, work()))
        except BaseException as exc:  # handed to the caller, whatever it is
            outcome.append((False, exc))

    with _DEEP_STACK:
        try:
            size = threading.stack_size(DEEP_STACK_BYTES)
        except ValueError as exc:  # a stack size this platform refuses
            raise RecursionError(f"no thread with a deep stack: {exc}") from None
        try:
            thread = threading.Thread(target=run, name="ddplint-deep-analysis", daemon=True)
            _raise_recursion_limit()
            try:
                thread.start()
            except RuntimeError as exc:  # no such stack here (memory limits)
                _restore_recursion_limit()
                raise RecursionError(f"no thread with a deep stack: {exc}") from None
        finally:
            threading.stack_size(size)
    try:
        thread.join()
    finally:
        with _DEEP_STACK:
            _restore_recursion_limit()
    succeeded, value = outcome[0] if outcome else (False, RecursionError("the analysis thread ended early"))
    if not succeeded:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]


def _raise_recursion_limit() -> None:
    """DEEP_RECURSION_LIMIT in force while deep runs last (called with _DEEP_STACK held)."""
    global _deep_runs, _limit_before_deep_runs
    if _deep_runs == 0:
        _limit_before_deep_runs = sys.getrecursionlimit()
        sys.setrecursionlimit(max(_limit_before_deep_runs, DEEP_RECURSION_LIMIT))
    _deep_runs += 1


def _restore_recursion_limit() -> None:
    """The limit from before the first deep run, once the last has ended (with _DEEP_STACK held)."""
    global _deep_runs
    _deep_runs -= 1
    if _deep_runs == 0:
        sys.setrecursionlimit(_limit_before_deep_runs)


def _analysed(
    data: bytes,
    filename: str,
    active: Sequence[Rule],
    project: Optional[ProjectIndex],
    parser: Optional[Parser],
    options: AnalysisOptions = NO_OPTIONS,
) -> tuple[list[Diagnostic], list[InternalError]]:
    """The findings of the rules `active` in a file that passed the screens, and the rules that
    crashed on it. RecursionError (deep but valid code) reaches the caller."""
    failures: list[InternalError] = []
    try:
        module = parser.parse(data) if parser is not None else parse_module(data)
    except cst.ParserSyntaxError as exc:
        return [_error(filename, f"syntax error: {_one_line(exc.message)}", exc.raw_line, exc.raw_column + 1)], failures
    except RecursionError:
        raise
    except Exception as exc:  # libcst raises a few other types on exotic input
        return [_error(filename, f"cannot parse: {type(exc).__name__}: {_one_line(str(exc))}")], failures
    # Decoding ourselves: `module.code` would regenerate the whole source (a full codegen pass).
    text = data.decode(module.encoding, errors="replace")
    if FILE_NOQA.search(text):
        return [], failures
    view = project.view_for(filename) if project is not None else None
    model = ModuleModel(build_facts(module, text, view, parser.statement_facts if parser is not None else None, options, is_notebook(filename)))
    findings: list[Finding] = []
    for rule in active:
        try:
            findings.extend(rule.check(model))
        except RecursionError:
            raise
        except Exception as exc:  # a bug in one rule must not hide the others' findings
            detail = f"internal error in {rule.code} ({rule.name}): {type(exc).__name__}: {_one_line(str(exc))}"
            failures.append(InternalError(filename, rule.code, detail))
    if not findings:
        return [], failures
    return _locate(findings, module, text, filename, parser.positions if parser is not None else positions_of), failures


def _locate(findings: list[Finding], module: cst.Module, text: str, filename: str, locate=positions_of) -> list[Diagnostic]:
    # Positions are resolved only for files that have findings, and only for the nodes named.
    positions = locate(module, _anchors(findings))
    lines = split_lines(text)
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
                explanation=finding.explanation,
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


def parses_safely(data: bytes, filename: str) -> bool:
    """Whether libcst may be given `data`: CPython compiles it and it is not nested deeply enough
    to overflow libcst's native parser (the project index summarises only such modules)."""
    problem, _ = compile_screen(data, filename)
    return problem is None


__all__ = ["FILE_NOQA", "NOQA", "InternalError", "lint_source", "parses_safely"]
