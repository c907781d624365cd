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
from ddplint.analysis.options import NO_OPTIONS, AnalysisOptions
from ddplint.analysis.project import ProjectIndex
from ddplint.analysis.syntax import parse_module
from ddplint.diagnostics import Diagnostic, InternalError, Location
from ddplint.diagnostics import error_diagnostic as _error  # short local names: the checks read as before
from ddplint.diagnostics import one_line as _one_line
from ddplint.edits import locate_fix
from ddplint.positions import positions_of
from ddplint.recovery import SYNTAX_ERROR_PREFIX, blank_null_bytes_in_comments, recover
from ddplint.rules import select_rules
from ddplint.rules.base import Finding, Rule
from ddplint.screen import (
    Unparsable,
    able_to_fire,
    candidates_by_bytes,
    candidates_by_names,
    compile_screen,
    triggered_by_bytes,
)
from ddplint.source import MAX_ANALYSED_BYTES, parser_bytes, split_lines

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
    active = candidates_by_bytes(data, rules)
    # A file may get its loader or process group from the project's own modules without a
    # single trigger word of its own: then the names it uses from them decide (below).
    if not active and (project is None or not project.imported_targets(filename, data)):
        if not _caller_judged_by_bytes(rules, data, filename, project):
            return []  # the common case: nothing here any selected rule could care about
    if len(data) > MAX_ANALYSED_BYTES:
        if not _linked(active, project, filename, data):
            return []
        size = f"{len(data) / 1e6:.1f} MB"
        return [_error(filename, f"not analysed: {size} is over the {MAX_ANALYSED_BYTES // 10**6} MB limit (generated code?)")]
    if b"\0" in data:
        blanked = blank_null_bytes_in_comments(data)
        if blanked is not None:
            return _with_null_bytes_blanked(*blanked, filename, active, rules, errors, project, parser, options)
    problem, names = parser.screen(data, filename) if parser is not None else compile_screen(data, filename)
    if problem is not None and not _linked(active, project, filename, data):
        return []
    recovered = recover(data, filename, _as_error(problem)) if problem is not None and problem.is_syntax_error else None
    if recovered is not None:  # analyse all but the statements that do not parse; each gets a DDP000
        broken = [_error(filename, SYNTAX_ERROR_PREFIX + _one_line(b.message), b.row, b.column) for b in recovered.broken]
        found = lint_source(recovered.data, filename, rules, errors, project, parser, options)
        return sorted(broken + found, key=lambda d: d.sort_key)
    if problem is not None:
        return [_error(filename, _one_line(problem.reason), problem.row, problem.column)]
    active = candidates_by_names(active, data, names)
    started_elsewhere = project.may_start_process_group if project is not None else None
    guard_words = options.guard_words()
    active = able_to_fire(active, data, names, started_elsewhere, guard_words) if active else []
    if project is not None:
        active = _with_project_rules(active, rules, data, names, filename, project, guard_words)
        active = _with_caller_judged_rules(active, rules, data, names, filename, project)
    if not active:
        return []
    return _analysed_at_any_depth(data, filename, active, errors, project, parser, options)


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
    facts = build_facts(module, text, view, parser.statement_facts if parser is not None else None, options)
    findings: list[Finding] = []
    for rule in active:
        try:
            findings.extend(rule.check(facts))
        except RecursionError:
            raise
        except Exception as exc:  # a bug in one rule must not hide the others' findings
            detail = f"internal error in {rule.code} ({rule.name}): {type(exc).__name__}: {_one_line(str(exc))}"
            failures.append(InternalError(filename, rule.code, detail))
    if not findings:
        return [], failures
    return _locate(findings, module, text, filename, parser.positions if parser is not None else positions_of), failures


def _with_null_bytes_blanked(
    data: bytes,
    first: int,
    filename: str,
    active: Sequence[Rule],
    rules: Sequence[Rule],
    errors: Optional[list[InternalError]],
    project: Optional[ProjectIndex],
    parser: Optional[Parser],
    options: AnalysisOptions,
) -> list[Diagnostic]:
    """A file whose comments hold null bytes: analysed with them made spaces, and one DDP000 at
    the first (where the file's problems are reported at all), as CPython refuses the file."""
    found = lint_source(data, filename, rules, errors, project, parser, options)
    if not _linked(active, project, filename, data):
        return found
    before = split_lines(data[:first].decode("utf-8", errors="replace"))
    note = _error(filename, NULL_BYTE_MESSAGE, len(before), len(before[-1]) + 1)
    return sorted([note, *found], key=lambda d: d.sort_key)


NULL_BYTE_MESSAGE = SYNTAX_ERROR_PREFIX + "null byte in a comment: CPython refuses the file (analysed as if it were a space)"


def _with_project_rules(
    active: list[Rule],
    rules: Sequence[Rule],
    data: bytes,
    names: frozenset[str],
    filename: str,
    project: ProjectIndex,
    guard_words: tuple[bytes, ...] = (),
) -> list[Rule]:
    """The rules a file's own words select, plus those it may need for what it uses from the
    project's modules (a loader factory whose sampler needs set_epoch, a process-group set-up, a
    collective helper), whose words it lacks. Only distributed-only rules use those offers (the
    others judge the file's own DataLoader / DataParallel / sampler calls), so the project (a
    summary: a parse) is asked only if such a rule is not selected by the file's words already
    and can fire here. Without this, a file that names one trigger of another rule (`DDP(...)`)
    lost DDP002 for a factory's sampler, and the answer depended on the rules selected."""
    chosen = set(active)
    missing = [rule for rule in rules if rule.distributed_only and rule not in chosen]
    if not missing:
        return active
    able = able_to_fire(missing, data, names, project.may_start_process_group, guard_words)
    if not able or not project.offers_any_of(filename, data, names):
        return active
    chosen.update(able)
    return [rule for rule in rules if rule in chosen]


def _caller_judged_by_bytes(rules: Sequence[Rule], data: bytes, filename: str, project: Optional[ProjectIndex]) -> list[Rule]:
    """The rules judged by their callers (`Rule.judged_by_callers`) whose triggers a project's
    `.py` module holds, distributed code or not."""
    if project is None or not filename.endswith(".py"):
        return []
    return triggered_by_bytes(data, [rule for rule in rules if rule.judged_by_callers])


def _with_caller_judged_rules(
    active: Sequence[Rule], rules: Sequence[Rule], data: bytes, names: frozenset[str], filename: str,
    project: ProjectIndex,
) -> list[Rule]:
    """The rules a file's own words select, plus the distributed-only rules judged by their
    callers (`Rule.judged_by_callers`) whose triggers it holds, when the screens left them out
    for want of distributed code: in a project's `.py` module (one other modules can import)
    the rule asks the project whether a distributed module runs it in its ranks. Not for a
    notebook or a lone file, which nothing imports."""
    wanted = [rule for rule in _caller_judged_by_bytes(rules, data, filename, project) if rule not in active]
    added = candidates_by_names(wanted, data, names) if wanted else []
    if not added:
        return list(active)
    chosen = set(active) | set(added)
    return [rule for rule in rules if rule in chosen]


def _as_error(problem: Unparsable) -> SyntaxError:
    """The syntax error the screen's compile met (its message, line and column): recovery starts
    from it instead of compiling the file again."""
    message = problem.reason[len(SYNTAX_ERROR_PREFIX):] if problem.reason.startswith(SYNTAX_ERROR_PREFIX) else problem.reason
    error = SyntaxError(message)
    error.lineno, error.offset = problem.row, problem.column
    return error


def _linked(active: Sequence[Rule], project: Optional[ProjectIndex], filename: str, data: bytes) -> bool:
    """Whether a file's own problems (too large, does not compile) are reported: it holds a
    trigger, or imports a project module that offers something. Asked only of such files, as
    the answer summarises every project module the file imports; a file that compiles needs only
    the summaries of modules that define a name it uses (`ProjectIndex.offers_any_of`)."""
    return bool(active) or (project is not None and project.may_import_project(filename, data))


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
