"""Which selected rules could have anything to say about a file, decided without libcst.

libcst costs ~3 ms per kB (parse plus our one visitor pass); almost no file in a large repository
has anything for a rule to find. So every file goes through cheap stages first:

1. bytes: a rule is a candidate only if one of its triggers occurs in the raw bytes (name
   triggers as whole words: `broadcast` does not match `broadcast_tensors`, `*valid*` matches
   `validate`), and distributed-only rules also need a distributed token. Plain substring tests
   (memchr speed), with the word boundaries checked only where the literal occurs: over torch's
   46 MB this stage went from ~11 CPU-seconds (a look-behind regex per rule) to about one;
2. CPython's compiler, which every remaining file needs anyway as the syntax check in front of
   libcst: name triggers must match names the code uses (loads, attributes, imports, keyword
   names), not only words in a comment or a docstring;
3. required words (`Rule.requires`): what a rule cannot fire without beyond its triggers (DDP007
   and DDP010 need a rank guard, so a file without a rank word is not theirs); and for the
   distributed-only rules, code that can be distributed (`analysis.distributed.may_be_distributed`:
   the names stage-2 found, not a "distributed" in a docstring; over torch's package this leaves
   237 of 320 files to parse). Applied after the engine chose its rules on the triggers alone.

The compiler is also the guard that keeps libcst alive: its native parser overflows the C stack on
pathological nesting, where CPython raises RecursionError / MemoryError instead.

`rules_to_run()` is the one entry (the engine's): the stages above, the size limit, null bytes in
comments, syntax errors cut out by recovery.py, and the questions to the project's other modules
(`ProjectQuestions`, four cheap questions that `analysis.project.ProjectIndex` answers), answered
as a `ScreenResult`.
"""

from __future__ import annotations
import __future__

import ast
import operator
import re
import sys
import warnings
from dataclasses import dataclass
from functools import lru_cache, reduce
from types import CodeType
from typing import AbstractSet, Callable, Generic, Iterable, MutableMapping, Optional, Protocol, Sequence, TypeVar

from ddplint.analysis.distributed import may_be_distributed
from ddplint.analysis.options import NO_OPTIONS, AnalysisOptions
from ddplint.analysis.torch_api import DISTRIBUTED_TOKENS
from ddplint.diagnostics import one_line
from ddplint.recovery import SYNTAX_ERROR_PREFIX, blank_null_bytes_in_comments, recover
from ddplint.source import MAX_ANALYSED_BYTES, compile_flags, split_lines

# Deeper syntax trees than this are refused: real code stays far below (a few dozen levels), and
# libcst's native parser overflows the C stack somewhere past a few thousand. Python >= 3.11's
# compiler refuses such input itself; older ones parse it happily, so there the tree is measured.
MAX_NESTING = 500
_COMPILER_GUARDS_NESTING = sys.version_info >= (3, 11)
# Python >= 3.11's compiler refuses code nested deeper than three times the recursion limit in
# force (less three times the caller's depth): at the default limit, 1,000, about 3,000 levels
# (2,992 for an attribute chain compiled from the top), which libcst parses in ~4.5 MB of C stack
# (measured: it overflows an 8 MB main-thread stack near 5,500 levels of attribute chain; its
# native recursion is not counted by the limit). A raised limit moves the compiler's threshold
# with it: hypothesis raises it to ~2,100 around each example, the engine's deep-stack retry to
# 20,000, a program embedding ddplint may too. That let a 6,000-long chain reach libcst, whose
# overflow killed the process. So above the default limit the tree is measured against the depth
# the compiler allows at the default, and the verdict does not depend on the limit in force.
_DEFAULT_RECURSION_LIMIT = 1_000
_COMPILER_NESTING = 3 * _DEFAULT_RECURSION_LIMIT


@dataclass(frozen=True)
class Unparsable:
    """Why a file cannot be analysed, with the position CPython reported."""

    reason: str
    row: int = 1
    column: int = 1
    is_syntax_error: bool = False  # the code, not its encoding or its depth: recovery.py may save the rest

    def as_syntax_error(self) -> SyntaxError:
        """The syntax error the compile met (its message, line and column): recovery starts from
        it instead of compiling the file again."""
        reason = self.reason
        error = SyntaxError(reason[len(SYNTAX_ERROR_PREFIX):] if reason.startswith(SYNTAX_ERROR_PREFIX) else reason)
        error.lineno, error.offset = self.row, self.column
        return error


class Triggered(Protocol):
    """What the screen needs of a rule: plain data (the screen sits below the rules)."""

    @property
    def triggers(self) -> tuple[bytes, ...]: ...

    @property
    def distributed_only(self) -> bool: ...

    @property
    def requires(self) -> tuple[tuple[bytes, ...], ...]: ...

    @property
    def judged_by_callers(self) -> tuple[str, ...]: ...


# Name characters, as `\w` in a bytes pattern matches them (ASCII letters, digits, underscore).
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_NAME_PATTERN = re.compile(rb"^[\w*]*\w[\w*]*$")


@dataclass(frozen=True)
class _Trigger:
    """One trigger as a literal to look for, and what must surround it. `*` stands for any run of
    name characters, so `*valid*` holds for any occurrence of `valid` (it lies inside some name),
    `DataLoader` only for one with no name character on either side. A pattern with a `*` inside
    (`a*b`) keeps a regex, behind the substring test of its longest literal piece."""

    literal: bytes
    whole_word_left: bool
    whole_word_right: bool
    regex: Optional[re.Pattern] = None  # bytes, as whole words
    is_name: bool = True  # False: a raw substring such as `.to(`, met by its bytes alone

    def in_bytes(self, data: bytes) -> bool:
        if self.literal not in data:
            return False
        if not self.is_name:
            return True
        if self.regex is not None:
            return self.regex.search(data) is not None
        if not (self.whole_word_left or self.whole_word_right):
            return True
        return _occurs_bounded(data, self.literal, self.whole_word_left, self.whole_word_right)


def _occurs_bounded(data: bytes, literal: bytes, left: bool, right: bool) -> bool:
    start = data.find(literal)
    while start != -1:
        end = start + len(literal)
        if (not left or start == 0 or data[start - 1] not in _WORD_BYTES) and (
            not right or end == len(data) or data[end] not in _WORD_BYTES
        ):
            return True
        start = data.find(literal, start + 1)
    return False


@dataclass(frozen=True)
class _RuleTriggers:
    triggers: tuple[_Trigger, ...]
    names: Optional[re.Pattern]  # the name patterns, to be met by a name the code uses


@lru_cache(maxsize=None)
def _compile_triggers(triggers: tuple[bytes, ...]) -> _RuleTriggers:
    """A rule's triggers are name patterns, `*` standing for any run of name characters:
    `DataLoader` is that name only, `*valid*` any name holding "valid" (`validate`,
    `run_validation`). Anything else (`.to(`) is looked for as raw bytes."""
    patterns = sorted(t for t in triggers if _NAME_PATTERN.match(t))
    compiled = [_Trigger(t, False, False, is_name=False) for t in triggers if not _NAME_PATTERN.match(t)]
    compiled.extend(_name_trigger(p) for p in patterns)
    if not patterns:
        return _RuleTriggers(tuple(compiled), None)
    names = re.compile(b"|".join(_as_regex(p) for p in patterns).decode())
    return _RuleTriggers(tuple(compiled), names)


def _name_trigger(pattern: bytes) -> _Trigger:
    core = pattern.strip(b"*")
    left, right = not pattern.startswith(b"*"), not pattern.endswith(b"*")
    if b"*" not in core:
        return _Trigger(core, left, right)
    longest = max(core.split(b"*"), key=len)
    return _Trigger(longest, left, right, regex=re.compile(rb"(?<!\w)(?:%s)(?!\w)" % _as_regex(pattern)))


def _as_regex(pattern: bytes) -> bytes:
    return re.escape(pattern).replace(rb"\*", rb"\w*")


def _triggers_of(rule: Triggered) -> _RuleTriggers:
    return _compile_triggers(tuple(rule.triggers))


R = TypeVar("R", bound=Triggered)


def candidates_by_bytes(data: bytes, rules: Sequence[R], need_distributed: bool = True) -> list[R]:
    """Stage 1: the rules whose triggers occur in the raw bytes. Substring tests only (a regex
    only behind a substring hit, for the rare pattern with a `*` inside): a file costs a few
    memchr-speed passes, and the distributed tokens are looked for only if a rule needs them
    (`need_distributed=False`: not even then, `triggered_by_bytes`)."""
    found: list[R] = []
    distributed: Optional[bool] = None
    for rule in rules:
        if rule.distributed_only and need_distributed:
            if distributed is None:
                distributed = any(token in data for token in DISTRIBUTED_TOKENS)
            if not distributed:
                continue
        if any(trigger.in_bytes(data) for trigger in _triggers_of(rule).triggers):
            found.append(rule)
    return found


def triggered_by_bytes(data: bytes, rules: Sequence[R]) -> list[R]:
    """Stage 1 without the distributed tokens: for rules that callers in other modules may
    judge (`Rule.judged_by_callers`) in a module with no distributed code of its own."""
    return candidates_by_bytes(data, rules, need_distributed=False)


def candidates_by_names(rules: Sequence[R], data: bytes, names: frozenset[str]) -> list[R]:
    """Stage 2: drop rules whose name triggers occur only in comments and strings."""
    return [rule for rule in rules if _names_match(_triggers_of(rule), data, names)]


def _names_match(triggers: _RuleTriggers, data: bytes, names: frozenset[str]) -> bool:
    if any(not t.is_name and t.literal in data for t in triggers.triggers):
        return True
    return triggers.names is not None and any(triggers.names.fullmatch(name) for name in names)


def able_to_fire(
    rules: Sequence[R],
    data: bytes,
    names: frozenset[str],
    distributed_elsewhere: Optional[Callable[[AbstractSet[str]], bool]] = None,
    guard_words: tuple[bytes, ...] = (),
) -> list[R]:
    """Stage 3: drop rules that lack a kind of word they cannot fire without (`requires`: a
    word of every group, in any case), and the distributed-only rules where the code cannot be
    distributed (`may_be_distributed`: its names, not a word in a comment or a docstring;
    `distributed_elsewhere`: whether a project function it calls by one of these names may start
    the process group or make a collective). Triggers say what a rule is about (`all_reduce`); these say what else
    it needs to say anything (a rank guard around it, a process group). Decided after the
    engine's choice of rules, which stays on the triggers alone. `guard_words`: the lower-case
    names of the configuration's own rank-zero functions, which count as words of every required
    group (the only one today is the rank-guard words of DDP007 and DDP010)."""
    lowered: Optional[bytes] = None
    found: list[R] = []
    for rule in rules:
        if rule.requires:
            lowered = data.lower() if lowered is None else lowered
            if not all(any(word in lowered for word in (*group, *guard_words)) for group in rule.requires):
                continue
        found.append(rule)
    if any(rule.distributed_only for rule in found) and not may_be_distributed(data, names, distributed_elsewhere):
        return [rule for rule in found if not rule.distributed_only]
    return found


def compile_screen(data: bytes, filename: str, flags: int = 0) -> tuple[Optional[Unparsable], frozenset[str]]:
    """(problem, names used by the code). CPython's messages are the ones users know, and its
    compiler is several times cheaper than libcst. `flags`: `__future__` features in force."""
    flags |= compile_flags(filename)
    try:
        with warnings.catch_warnings():
            # The checked file's own SyntaxWarnings (`"\d"`, `1if x`) are not ddplint's to print.
            warnings.simplefilter("ignore")
            if _COMPILER_GUARDS_NESTING:
                if sys.getrecursionlimit() > _DEFAULT_RECURSION_LIMIT and _nested_deeper_than(data, filename, flags, _COMPILER_NESTING):
                    return Unparsable("cannot parse: code nested too deeply"), frozenset()
                return None, frozenset(_code_names(compile(data, filename, "exec", flags, dont_inherit=True)))
            tree = compile(data, filename, "exec", flags | ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        message = str(exc.msg)
        reason = "cannot decode file" if "decod" in message or "encoding" in message else "syntax error"
        return Unparsable(f"{reason}: {message}", exc.lineno or 1, exc.offset or 1, reason == "syntax error"), frozenset()
    except (RecursionError, MemoryError):
        return Unparsable("cannot parse: code nested too deeply"), frozenset()
    except (ValueError, UnicodeDecodeError, LookupError) as exc:
        return Unparsable(f"cannot decode file: {exc}"), frozenset()
    if _nesting_exceeds(tree, MAX_NESTING):
        return Unparsable(f"cannot parse: code nested too deeply (over {MAX_NESTING} levels)"), frozenset()
    return None, frozenset(_tree_names(tree))


# What a `from __future__ import` can switch on, as compiler flags.
_FUTURE_FLAGS = reduce(operator.or_, (getattr(__future__, name).compiler_flag for name in __future__.all_feature_names))
# Statements at module level that a statement elsewhere at module level can make illegal (`x = 1`
# then `global x`): found in a top-level statement other than a function or a class.
_MODULE_GLOBAL = re.compile(rb"(?m)^[ \t]*global\b")
_OWN_SCOPE = re.compile(rb"(?:@|def\b|async[ \t]+def\b|class\b)")
# A coding declaration or a byte-order mark decides how every line is decoded.
_ENCODING_DECLARED = re.compile(rb"\A(?:\xef\xbb\xbf|[^\n]*coding[:=]|[^\n]*\n[^\n]*coding[:=])")


def compile_by_statement(
    data: bytes, statements: Sequence[bytes], filename: str, known: MutableMapping[tuple[bytes, int], frozenset[str]]
) -> tuple[Optional[Unparsable], frozenset[str]]:
    """`compile_screen(data)` from the file's top-level statements (`statements`, the texts that
    make up `data`) compiled one by one, the names of each remembered in `known` by its text: in
    an editor a change touches one statement, and the language server compiles only that one.
    A top-level statement is a unit of Python's grammar and of its scopes, but for the module's
    own scope: a `global` at module level and the place of `from __future__` imports are judged
    over the whole file, as are an encoding declaration and any statement that does not compile
    alone (the whole file then gives CPython's own message and position)."""
    if _ENCODING_DECLARED.match(data) or any(_MODULE_GLOBAL.search(text) and not _OWN_SCOPE.match(text) for text in statements):
        return compile_screen(data, filename)
    names: set[str] = set()
    futures = [i for i, text in enumerate(statements) if b"__future__" in text]
    flags, first = 0, 0
    if futures:  # the statements up to the last future import compile together: that checks their place
        first = futures[-1] + 1
        head = b"".join(statements[:first])
        problem, head_names = compile_screen(head, filename)
        if problem is not None:
            return compile_screen(data, filename)
        flags = compile(head, filename, "exec", compile_flags(filename), dont_inherit=True).co_flags & _FUTURE_FLAGS
        names |= head_names
    for text in statements[first:]:
        found = known.get((text, flags))
        if found is None:
            problem, found = compile_screen(text, filename, flags)
            if problem is not None:
                return compile_screen(data, filename)
            known[(text, flags)] = found
        names |= found
    return None, frozenset(names)


def _code_names(code: CodeType) -> Iterable[str]:
    """Every name a compiled module uses: globals, attributes, imported modules and names, locals,
    and the strings of constant tuples (keyword-argument names live there). Docstrings, comments
    and other string literals are not names. Walking code objects costs a few milliseconds where
    an AST walk costs a hundred."""
    stack = [code]
    while stack:
        current = stack.pop()
        for name in current.co_names:
            yield from name.split(".")
        yield from current.co_varnames
        yield from current.co_cellvars
        yield from current.co_freevars
        for const in current.co_consts:
            if isinstance(const, CodeType):
                stack.append(const)
            elif isinstance(const, tuple):
                yield from (item for item in const if isinstance(item, str) and item.isidentifier())


def _tree_names(tree: ast.AST) -> Iterable[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.alias):
            yield from node.name.split(".")
            if node.asname:
                yield node.asname
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg


def _nested_deeper_than(data: bytes, filename: str, flags: int, limit: int) -> bool:
    """Whether the syntax tree of `data` (which may not compile: then the compile that follows
    says why) is deeper than `limit` levels."""
    try:
        tree = compile(data, filename, "exec", flags | ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError:
        return False
    return _nesting_exceeds(tree, limit)


def _nesting_exceeds(tree: ast.AST, limit: int) -> bool:
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False


# The one entry: every stage above, the size limit, the file's own problems and the project's
# questions, in the order that keeps the common file (no trigger at all) cheapest.


class ProjectQuestions(Protocol):
    """What the screen asks of the files checked together with this one (`analysis.project.
    ProjectIndex`), each answered without parsing the file. The screen depends on these four
    questions only, not on the index and its summaries (tests ask them of a fake)."""

    def imported_targets(self, path: str, data: bytes) -> Sequence[tuple[str, str]]: ...

    def may_import_project(self, path: str, data: bytes) -> bool: ...

    def offers_any_of(self, path: str, data: bytes, names: frozenset[str]) -> bool: ...

    def may_call_distributed_helper(self, path: str, data: bytes, names: AbstractSet[str]) -> bool: ...


# How a file is compiled for its names: `compile_screen`, or the language server's statement-by-
# statement compile (lsp/incremental.py) that gives the same answer.
Compiler = Callable[[bytes, str], tuple[Optional[Unparsable], frozenset[str]]]

NULL_BYTE_MESSAGE = SYNTAX_ERROR_PREFIX + "null byte in a comment: CPython refuses the file (analysed as if it were a space)"


@dataclass(frozen=True)
class ScreenResult(Generic[R]):
    """The screen's verdict on a file: the bytes to analyse (the file's own, or with null bytes in
    comments blanked and broken statements cut out, recovery.py), the rules to run on them (none:
    nothing here any selected rule could care about), and what is reported about the file itself
    (DDP000: too large, does not compile, a broken statement), only where a rule or the project
    has a stake in the file."""

    data: bytes
    rules: Sequence[R] = ()
    problems: tuple[Unparsable, ...] = ()


def rules_to_run(
    data: bytes,
    filename: str,
    rules: Sequence[R],
    project: Optional[ProjectQuestions] = None,
    options: AnalysisOptions = NO_OPTIONS,
    compiler: Compiler = compile_screen,
) -> ScreenResult[R]:
    """Which of `rules` can have anything to say about a file, and why none: the byte stage, the
    size limit, the compile (the guard in front of libcst), the name stage, the required words
    and the project's offers, in that order. `project`: the files checked together with this
    one; `options`: the configuration's rank-zero functions count as rank-guard words."""
    active = candidates_by_bytes(data, rules)
    # A file may get its loader or process group from the project's own modules without a
    # single trigger word of its own: then the names it uses from them decide (below).
    if not active and (project is None or not project.imported_targets(filename, data)):
        if not _caller_judged_by_bytes(rules, data, filename, project):
            return ScreenResult(data)  # the common case: nothing here any selected rule could care about
    if len(data) > MAX_ANALYSED_BYTES:
        size = f"{len(data) / 1e6:.1f} MB"
        too_large = Unparsable(f"not analysed: {size} is over the {MAX_ANALYSED_BYTES // 10**6} MB limit (generated code?)")
        return ScreenResult(data, problems=(too_large,) if _linked(active, project, filename, data) else ())
    if b"\0" in data:
        blanked = blank_null_bytes_in_comments(data)
        if blanked is not None:
            return _with_null_bytes_blanked(*blanked, active, filename, rules, project, options, compiler)
    problem, names = compiler(data, filename)
    if problem is not None:
        return _unparsable(problem, active, data, filename, rules, project, options, compiler)
    active = candidates_by_names(active, data, names)
    distributed_elsewhere = _helpers_of(project, filename, data)
    guard_words = options.guard_words()
    active = able_to_fire(active, data, names, distributed_elsewhere, guard_words) if active else []
    if project is not None:
        active = _with_project_rules(active, rules, data, names, filename, project, guard_words)
        active = _with_caller_judged_rules(active, rules, data, names, filename, project)
    return ScreenResult(data, active)


def _helpers_of(project: Optional[ProjectQuestions], filename: str, data: bytes) -> Optional[Callable[[AbstractSet[str]], bool]]:
    """The project's answer to whether a file using these names may call its distributed helpers."""
    if project is None:
        return None
    return lambda names: project.may_call_distributed_helper(filename, data, names)


def _unparsable(
    problem: Unparsable, active: Sequence[R], data: bytes, filename: str, rules: Sequence[R],
    project: Optional[ProjectQuestions], options: AnalysisOptions, compiler: Compiler,
) -> ScreenResult[R]:
    """A file the compile refused: nothing where nothing links it to a rule or the project;
    else, for a syntax error, the rest of the file screened with each broken statement reported
    (recovery.py), or the problem itself."""
    if not _linked(active, project, filename, data):
        return ScreenResult(data)
    recovered = recover(data, filename, problem.as_syntax_error()) if problem.is_syntax_error else None
    if recovered is None:
        return ScreenResult(data, problems=(Unparsable(one_line(problem.reason), problem.row, problem.column),))
    broken = tuple(Unparsable(SYNTAX_ERROR_PREFIX + one_line(b.message), b.row, b.column) for b in recovered.broken)
    rest = rules_to_run(recovered.data, filename, rules, project, options, compiler)
    return ScreenResult(rest.data, rest.rules, broken + rest.problems)


def _with_null_bytes_blanked(
    data: bytes, first: int, active: Sequence[R], filename: str, rules: Sequence[R],
    project: Optional[ProjectQuestions], options: AnalysisOptions, compiler: Compiler,
) -> ScreenResult[R]:
    """A file whose comments hold null bytes (`data`: them made spaces): screened as such, with
    one problem at the first (where the file's problems are reported at all), as CPython
    refuses the file."""
    rest = rules_to_run(data, filename, rules, project, options, compiler)
    if not _linked(active, project, filename, data):
        return rest
    before = split_lines(data[:first].decode("utf-8", errors="replace"))
    note = Unparsable(NULL_BYTE_MESSAGE, len(before), len(before[-1]) + 1)
    return ScreenResult(rest.data, rest.rules, (note, *rest.problems))


def _linked(active: Sequence[Triggered], project: Optional[ProjectQuestions], filename: str, data: bytes) -> bool:
    """Whether a file's own problems (too large, does not compile) are reported: it holds a
    trigger, or imports a project module that offers something. Asked only of such files, as
    the answer summarises every project module the file imports; a file that compiles needs only
    the summaries of modules that define a name it uses (`ProjectQuestions.offers_any_of`)."""
    return bool(active) or (project is not None and project.may_import_project(filename, data))


def _with_project_rules(
    active: list[R],
    rules: Sequence[R],
    data: bytes,
    names: frozenset[str],
    filename: str,
    project: ProjectQuestions,
    guard_words: tuple[bytes, ...] = (),
) -> list[R]:
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
    able = able_to_fire(missing, data, names, _helpers_of(project, filename, data), guard_words)
    if not able or not project.offers_any_of(filename, data, names):
        return active
    chosen.update(able)
    return [rule for rule in rules if rule in chosen]


def _caller_judged_by_bytes(rules: Sequence[R], data: bytes, filename: str, project: Optional[ProjectQuestions]) -> list[R]:
    """The rules judged by their callers (`Rule.judged_by_callers`) whose triggers a project's
    `.py` module holds, distributed code or not."""
    if project is None or not filename.endswith(".py"):
        return []
    return triggered_by_bytes(data, [rule for rule in rules if rule.judged_by_callers])


def _with_caller_judged_rules(
    active: Sequence[R], rules: Sequence[R], data: bytes, names: frozenset[str], filename: str,
    project: ProjectQuestions,
) -> list[R]:
    """The rules a file's own words select, plus the distributed-only rules judged by their
    callers (`Rule.judged_by_callers`) whose triggers it holds and whose judged calls it may
    make (`may_call_any`), when the screens left them out for want of distributed code: in a
    project's `.py` module (one other modules can import) the rule asks the project whether a
    distributed module runs it in its ranks. Not for a notebook or a lone file, which nothing
    imports. Without the judged calls, every module holding the word `load` was parsed for
    DDP008 (98 of the torch package's modules, 5 MB, a third more CPU for the whole run)."""
    wanted = [rule for rule in _caller_judged_by_bytes(rules, data, filename, project) if rule not in active]
    added = candidates_by_names(wanted, data, names) if wanted else []
    if added:
        tree = _syntax_tree(data, filename)
        added = [rule for rule in added if tree is None or may_call_any(tree, rule.judged_by_callers)]
    if not added:
        return list(active)
    chosen = set(active) | set(added)
    return [rule for rule in rules if rule in chosen]


def _syntax_tree(data: bytes, filename: str) -> Optional[ast.Module]:
    """CPython's syntax tree of code the compile screen accepted (None if it cannot be had)."""
    tree = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = compile(data, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    return tree if isinstance(tree, ast.Module) else None


def may_call_any(tree: ast.Module, qualified: Sequence[str]) -> bool:
    """Whether the module may call one of `qualified` (`torch.load`) as the engine's import
    table (analysis/imports.py) names the callee, read off CPython's tree: a callee `th.load`
    or `f` whose head an import binds (`import torch as th`, `from torch import load as f`,
    anywhere in the file), through names assigned such a chain (`L = torch.load`, `t = torch`,
    followed without the table's depth limit), and any star import (it may bind anything).
    A superset of the table's answer: a module this says no to has no call a rule judging
    those calls could flag. The table also renames a few torch paths to their public names
    (`canonical`); none of those public names is a judged call or one of its modules, which
    tests/test_screen_caller_judged.py checks."""
    wanted = frozenset(qualified)
    bindings: dict[str, set[str]] = {}
    aliases: dict[str, set[str]] = {}
    callees: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = _dotted(node.func)
            if callee is not None:
                callees.append(callee)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.partition(".")[0]
                bindings.setdefault(alias.asname or head, set()).add(alias.name if alias.asname else head)
        elif isinstance(node, ast.ImportFrom):
            if any(alias.name == "*" for alias in node.names):
                return True
            if node.level == 0 and node.module:  # a relative import never names an absolute module
                for alias in node.names:
                    bindings.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            chain = _dotted(node.value)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if chain is not None and isinstance(target, ast.Name):
                    aliases.setdefault(target.id, set()).add(chain)
    return any(not wanted.isdisjoint(_stands_for(callee, bindings, aliases)) for callee in callees)


def _stands_for(dotted: str, bindings: dict[str, set[str]], aliases: dict[str, set[str]]) -> set[str]:
    """Every qualified name `dotted` may stand for through `bindings` and `aliases` (each alias
    followed once along a path, so a cycle ends)."""
    found: set[str] = set()
    stack: list[tuple[str, frozenset[str]]] = [(dotted, frozenset())]
    while stack:
        current, followed = stack.pop()
        head, _, rest = current.partition(".")
        suffix = f".{rest}" if rest else ""
        found.update(qualified + suffix for qualified in bindings.get(head, ()))
        if head in aliases and head not in followed:
            stack.extend((target + suffix, followed | {head}) for target in aliases[head])
    return found


def _dotted(node: ast.AST) -> Optional[str]:
    """`a.b.c` for a Name / Attribute chain, else None (as the engine's `dotted_name`)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
