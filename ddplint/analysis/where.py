"""Where code runs: in the ranks of a distributed run, or somewhere a finding about ranks does not
apply.

A finding claims that N ranks do something together (all place their model on GPU 0, all load a
checkpoint onto it, all iterate the whole dataset). That needs the code to run in a rank. This
model places each call site and each function in one of:

- the launching process, before or after `mp.spawn(worker, ...)` (the function that spawns the
  workers, and what only it calls; a program's top-level code that spawns them, through a
  function or itself: its `__main__` block, a notebook's cells): one process, whose GPU 0 is
  its own;
- the single-process path: the arm of an `if` beside an arm that starts the ranks
  (`if n == 1: run(0, args) else: mp.spawn(run, ...)`, `if multi: main_distributed() else:
  main()`), the non-distributed arm of a test on the run's mode (`if args.distributed:`,
  `local_rank == -1`: the launcher always sets the rank, so its default marks the run without it);
- not at all when the script runs: a class nothing in the script builds, a test class;
- every rank, or some ranks (under a rank guard: `RankModel` tells which one).

A function is placed by its callers: one called only from the launching process runs there, and a
class built only there has its `__init__` run there. `mp.spawn(worker, ...)` itself is a call
from the launcher that runs `worker` in every rank.
"""

from __future__ import annotations

import enum
import math
from functools import cached_property
from typing import TYPE_CHECKING, Optional

import libcst as cst

from ddplint.analysis.syntax import is_none, walk
from ddplint.analysis.torch_api import PROCESS_GROUP_STARTERS, SPAWNERS, TEST_CLASS_SUFFIXES

if TYPE_CHECKING:
    from ddplint.analysis.distributed import RankModel
    from ddplint.analysis.facts import CallSite, Context, FunctionInfo, ModuleFacts
    from ddplint.analysis.flow import Flow

_MAX_CALLER_DEPTH = 4  # functions placed through at most this many levels of callers


class Where(enum.Enum):
    EVERY_RANK = "on every rank"
    SOME_RANKS = "on some ranks"  # under a rank guard (RankModel says which)
    LAUNCHER = "in the launching process"
    SINGLE_PROCESS = "on the single-process path"
    NEVER = "never, when the script runs"


_IN_A_RANK = (Where.EVERY_RANK, Where.SOME_RANKS)


class WhereModel:
    def __init__(self, facts: "ModuleFacts", flow: "Flow", ranks: "RankModel") -> None:
        self.facts = facts
        self.flow = flow
        self.ranks = ranks
        self._functions: dict[int, Where] = {}
        # (id(block), id(scope)) -> (block, index of its first single-process assert); the block
        # is kept so that its id stays its own
        self._asserts: dict[tuple[int, int], tuple[object, float]] = {}

    # -- the questions rules ask ---------------------------------------------------------------
    def in_a_rank(self, context: "Context") -> bool:
        """Code there runs in a rank of a distributed run (as far as the file tells)."""
        return self.of(context) in _IN_A_RANK

    def call_in_a_rank(self, site: "CallSite") -> bool:
        return self.in_a_rank(site.context) and id(site.node) not in self.single_process_nodes

    def of(self, context: "Context", depth: int = 0) -> Where:
        here = self._of_place(context)
        if here is not Where.EVERY_RANK:
            return here
        function = self.facts.function_of(context.scope)
        placed = self._of_function(function, depth) if function is not None else Where.EVERY_RANK
        if placed is Where.EVERY_RANK and self.ranks.runs_on_one_rank_only(context):
            return Where.SOME_RANKS
        return placed

    # -- a place in its own function -----------------------------------------------------------
    def _of_place(self, context: "Context") -> Where:
        if self.ranks.runs_single_process(context):
            return Where.SINGLE_PROCESS
        if any((id(branch), in_body) in self._single_process_arms for branch, in_body in context.branches):
            return Where.SINGLE_PROCESS
        if self._after_single_process_assert(context):
            return Where.SINGLE_PROCESS
        if any(self._arm_needs_single_process_none(branch, in_body, context) for branch, in_body in context.branches):
            return Where.SINGLE_PROCESS
        if context.scope is self.facts.module_scope and self._launches_from(self._in_main_block(context)):
            return Where.LAUNCHER
        return Where.EVERY_RANK

    def _after_single_process_assert(self, context: "Context") -> bool:
        """An earlier statement of an enclosing block asserts the single-process run (`assert
        opt.local_rank == -1, "DDP mode not implemented for --evolve"`): a rank stops there."""
        return any(self._first_single_process_assert(body, context) < index for body, index in context.path)

    def _first_single_process_assert(self, body, context: "Context") -> float:
        """Index of the first such `assert` in a block, inf if none (found once per block)."""
        key = (id(body), id(context.scope))
        known = self._asserts.get(key)
        if known is None:
            known = self._asserts[key] = (body, math.inf)
            ranks = self.ranks
            for index, statement in enumerate(body):
                small = statement.body if isinstance(statement, cst.SimpleStatementLine) else ()
                if any(isinstance(s, cst.Assert) and ranks.distributed_polarity(s.test, context.scope) is False for s in small):
                    known = self._asserts[key] = (body, index)
                    break
        return known[1]

    def _arm_needs_single_process_none(self, branch: cst.CSTNode, in_body: bool, context: "Context") -> bool:
        """The arm runs only when a value is None (`else:` of `if local_rank is not None:`), and
        None reaches it only from the single-process path (`pick(args.local_rank if distributed
        else None)`): a rank never takes that arm."""
        if not isinstance(branch, cst.If):
            return False
        tested = _none_test(branch.test)
        if tested is None or tested[1] != in_body:
            return False
        nones = [s for s in self.flow.sources(tested[0], context.scope) if is_none(s.node)]
        return bool(nones) and all(self.value_on_single_process_path(s.node) for s in nones)

    @cached_property
    def _single_process_arms(self) -> frozenset:
        """(id(if), arm) of each `if` / `else` whose other arm starts the ranks and whose own arm
        does not: `if world_size == 1: run(0, args) else: mp.spawn(run, ...)`, `if multi:
        main_distributed() else: main()`. The ranks must be started by a spawn or by a function
        of the file (an entry point): an arm that calls `init_process_group` itself beside an arm
        chosen by some option (`if args.fast: ... else: dist.init_process_group()`) may still be
        what every process of a torchrun job runs."""
        starting = {(id(node), arm) for site in self.facts.calls if self._starts_ranks(site) for node, arm in site.context.branches}
        arms: set[tuple[int, bool]] = set()
        for branch in self.facts.branches:
            if not isinstance(branch.node, cst.If) or not isinstance(branch.node.orelse, cst.Else):
                continue
            body, orelse = (id(branch.node), True) in starting, (id(branch.node), False) in starting
            if body != orelse:
                arms.add((id(branch.node), orelse))
        return frozenset(arms)

    def _starts_ranks(self, site: "CallSite") -> bool:
        """A call that starts the ranks: a spawn, or a function of the file that starts them. A
        spawned worker called directly (`work(0, args)`) is that worker run as the one process."""
        if self._is_spawn(site):
            return True
        return any(
            function in self._starting_functions and not self._spawned(function)
            for function, _ in self.facts.functions_called_by(site)
        )

    def _is_start(self, site: "CallSite") -> bool:
        return id(site) in self._start_sites

    @cached_property
    def _start_sites(self) -> frozenset[int]:
        """id() of the file's calls that start a process group, read off the file's index of
        calls by qualified name once (the reach of functions asks it of every call)."""
        return frozenset(id(site) for site in self.facts.calls_named(*PROCESS_GROUP_STARTERS))

    @cached_property
    def _starting_functions(self) -> set:
        return self.facts.functions_reaching(self._is_start)

    @cached_property
    def _launching_functions(self) -> set:
        """Functions that spawn the workers, directly or through a function of the file: they run
        in the launching process (unless a worker calls them, which `_of_function` sees)."""
        return self.facts.functions_reaching(self._is_spawn)

    def _is_spawn(self, site: "CallSite") -> bool:
        return id(site) in self._spawn_sites

    @cached_property
    def _spawn_sites(self) -> frozenset[int]:
        """id() of the file's calls that spawn workers (as `_start_sites`)."""
        return frozenset(id(site) for site in self.facts.calls_named(*SPAWNERS))

    def _launches_from(self, main_block: bool) -> bool:
        """The program's top-level code spawns the workers (itself or through a function of the
        file): its `if __name__ == "__main__":` block, or (`main_block` False) the module body
        outside it, a notebook's cells (a script spawning from unguarded module code cannot run:
        its workers would spawn again on import). That code runs in the launching process."""
        return main_block in self._launching_top_levels

    @cached_property
    def _launching_top_levels(self) -> frozenset[bool]:
        """For each spawn reached from module-level code: whether that code is the main block."""
        module = self.facts.module_scope
        return frozenset(
            self._in_main_block(site.context)
            for site in self.facts.calls
            if site.context.scope is module
            and (self._is_spawn(site) or any(f in self._launching_functions for f, _ in self.facts.functions_called_by(site)))
        )

    def _in_main_block(self, context: "Context") -> bool:
        if not context.path:
            return False
        body, index = context.path[0]
        statement = body[index]
        return isinstance(statement, cst.If) and "__main__" in self.facts.module.code_for_node(statement.test)

    # -- a function, by what it is and by its callers --------------------------------------------
    def _of_function(self, function: "FunctionInfo", depth: int) -> Where:
        known = self._functions.get(id(function))
        if known is None:
            self._functions[id(function)] = Where.EVERY_RANK  # recursion: assume the ranks
            known = self._functions[id(function)] = self._place_function(function, depth)
        return known

    def _place_function(self, function: "FunctionInfo", depth: int) -> Where:
        if function.class_name is not None and self._class_never_runs(function.class_name):
            return Where.NEVER
        if function in self._launching_functions and not self._spawned(function):
            return Where.LAUNCHER
        if depth >= _MAX_CALLER_DEPTH:
            return Where.EVERY_RANK
        callers = self.facts.call_sites_of(function)
        if not callers:
            return Where.EVERY_RANK  # called from elsewhere, or a method reached through an object
        places = {self._of_caller(site, depth) for site, _ in callers}
        for place in (Where.EVERY_RANK, Where.SOME_RANKS, Where.LAUNCHER):  # the widest first
            if place in places:
                return place
        return places.pop()

    def _of_caller(self, site: "CallSite", depth: int) -> Where:
        if self._is_spawn(site):
            return Where.EVERY_RANK  # `mp.spawn(worker, ...)`: the worker runs in every rank
        return self.of(site.context, depth + 1)

    def in_spawned_worker(self, site: "CallSite") -> bool:
        """The call runs in a worker this file starts with `mp.spawn` (the worker itself, or a
        function only workers call): processes of one machine that see the same GPUs."""
        function = self.facts.function_of(site.context.scope)
        if function is None:
            return False
        if self._spawned(function):
            return True
        callers = self.facts.call_sites_of(function)
        return bool(callers) and all(
            (caller := self.facts.function_of(call.context.scope)) is not None and self._spawned(caller)
            for call, _ in callers
        )

    def spawned_directly(self, function: "FunctionInfo") -> bool:
        """`function` is the one this file hands to `mp.spawn`: its first parameter is the
        worker's index, the others what the spawn hands every worker alike."""
        return self._spawned(function)

    def _spawned(self, function: "FunctionInfo") -> bool:
        return any(self._is_spawn(site) for site, _ in self.facts.call_sites_of(function))

    def _class_never_runs(self, name: str) -> bool:
        """A test class (run by a test harness, not launched per GPU), or, in a script, a class
        the file never builds, derives from or names."""
        if name.endswith(TEST_CLASS_SUFFIXES) or name in self._test_classes:
            return True
        return self.is_program and name not in self._names_used_outside_classes

    @cached_property
    def is_program(self) -> bool:
        """The file is run, not imported: a `__main__` block, or a process group started at
        module level. (A library module's classes are built by the modules that import them.)"""
        from ddplint.analysis.distributed import is_script

        module = self.facts.module_scope
        return is_script(self.facts) or any(
            site.context.scope is module and self._is_start(site) for site in self.facts.calls
        )

    @cached_property
    def _test_classes(self) -> set[str]:
        from ddplint.analysis.torch_api import TEST_CASE_CLASSES

        return self.facts.subclasses_of(TEST_CASE_CLASSES)

    @cached_property
    def _names_used_outside_classes(self) -> frozenset[str]:
        """Names the file uses anywhere but in the `class` statements' own names."""
        defined = {id(info.node.name) for info in self.facts.classes.values()}
        return frozenset(
            node.value for node in walk(self.facts.module) if isinstance(node, cst.Name) and id(node) not in defined
        )

    # -- values chosen on the single-process path ------------------------------------------------
    @cached_property
    def single_process_nodes(self) -> frozenset:
        """Nodes in the single-process arm of a conditional expression: `"cuda:0" if local_rank
        == -1 else f"cuda:{local_rank}"` (a launcher always sets the rank, so -1 is the run
        without one)."""
        inside: set[int] = set()
        ranks = self.ranks
        for branch in self.facts.branches:
            if isinstance(branch.node, cst.IfExp):
                polarity = ranks.distributed_polarity(branch.node.test, branch.context.scope)
                if polarity is not None:
                    arm = branch.node.orelse if polarity else branch.node.body
                    inside.update(id(node) for node in walk(arm))
        return frozenset(inside)

    def value_on_single_process_path(self, node: Optional[cst.CSTNode]) -> bool:
        return node is not None and id(node) in self.single_process_nodes


def _none_test(test: cst.BaseExpression) -> Optional[tuple[cst.BaseExpression, bool]]:
    """`x is None` -> (x, True), `x is not None` -> (x, False): the value tested, and which arm
    (True: the body) runs when it is None."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and is_none(test.comparisons[0].comparator):
        operator = test.comparisons[0].operator
        if isinstance(operator, cst.Is):
            return test.left, True
        if isinstance(operator, cst.IsNot):
            return test.left, False
    return None
