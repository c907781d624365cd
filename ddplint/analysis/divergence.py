"""Where the ranks of one job part ways (DDP007).

A collective hangs when some ranks reach it and others do not. Beyond a collective written under
a rank guard (distributed.RankModel), the ranks part ways at:

- an exit only some ranks take: `break` / `continue` / `return` under `if rank == 0:` inside a
  loop whose body makes a collective on every rank (rank 0 leaves; the others wait in the
  loop's next collective), `trainer.should_stop = True` on one rank of a Lightning run, and the
  other ranks' `if rank != 0 and <setting>: return` before a collective;
- a condition whose value differs between the ranks: one that reads the wall clock (each
  process has its own), or a variable that only one rank assigns (`reason = None` ...
  `if rank == 0: reason = "..."` ... `if reason is not None: dist.broadcast(...)`);
- a function of the file that only one rank ever calls: a collective inside it (or the call
  into a helper every rank also uses) is reached by that rank alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

from ddplint.analysis.reaching import order
from ddplint.analysis.records import CollectiveReach
from ddplint.analysis.syntax import BLOCK_EXITS, and_parts, dotted_name, ends_with, identifier_words, is_true, walk
from ddplint.analysis.torch_api import LIGHTNING_PACKAGES, LIGHTNING_STOP_FLAG, PER_PROCESS_VALUES

if TYPE_CHECKING:
    from ddplint.analysis.facts import ModuleFacts
    from ddplint.analysis.model import ModuleModel
    from ddplint.analysis.records import BranchSite, CallSite, Context, FunctionInfo, LoopSite

# Reads of the wall clock: two processes started together never see the same times, so a
# threshold on elapsed time is crossed on different steps by different ranks.
WALL_CLOCK_READS = frozenset(name for name in PER_PROCESS_VALUES if name.startswith(("time.", "datetime.")))

_MAX_CALL_DEPTH = 4  # how far a function only one rank calls is followed into its callees


@dataclass(frozen=True)
class RankExit:
    """An exit one rank takes alone (`node`), and the collective the other ranks go on to."""

    node: cst.CSTNode
    kind: str  # "break" | "continue" | "return" | "stop" (Lightning's `trainer.should_stop = True`)
    reach: Optional[CollectiveReach]  # None for "stop": Lightning's loop synchronises every step


def exits_in_arm(model: "ModuleModel", branch: "BranchSite", arm: bool) -> Iterator[RankExit]:
    """The exits in one arm of a rank guard that leave a loop every rank runs while that loop
    (or, for `return`, the rest of the function) makes a collective on every rank."""
    facts = model.facts
    node = branch.node
    if not isinstance(node, cst.If):
        return
    body = node.body if arm else node.orelse
    if body is None:
        return
    loop = _innermost_loop(branch.context)
    lightning = facts.imports.imports_any(LIGHTNING_PACKAGES)
    for statement, kind in _exit_statements(body):
        if kind == "stop":
            if lightning and not _shared_afterwards(model, branch, statement):
                yield RankExit(statement, kind, None)
            continue
        if _other_arm_exits(node, arm, kind):
            continue  # every rank leaves, each through its own arm
        reach = _collective_the_others_reach(model, branch, loop, kind)
        if reach is not None:
            yield RankExit(statement, kind, reach)


def _innermost_loop(context: "Context") -> Optional["LoopSite"]:
    loops = [loop for loop in context.loops if isinstance(loop.node, (cst.For, cst.While))]
    return loops[-1] if loops else None


def _exit_statements(block: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, str]]:
    """`break` / `continue` / `return` in a block that leave the loop (or function) around the
    block, not one of the block's own loops; and Lightning's stop flag set to a true value."""
    yield from _exits_below(block, inner_loop=False)


def _exits_below(node: cst.CSTNode, inner_loop: bool) -> Iterator[tuple[cst.CSTNode, str]]:
    for child in node.children:
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(child, cst.Return):
            yield child, "return"
        elif isinstance(child, (cst.Break, cst.Continue)) and not inner_loop:
            yield child, "break" if isinstance(child, cst.Break) else "continue"
        elif isinstance(child, cst.Assign) and _sets_stop_flag(child):
            yield child, "stop"
        else:
            # the `else:` of a loop runs after it, outside it; its body is the loop's own
            yield from _exits_below(child, inner_loop or isinstance(child, (cst.For, cst.While)))


def _sets_stop_flag(assign: cst.Assign) -> bool:
    """`trainer.should_stop = True` / `self.trainer.should_stop = True`: Lightning's trainer
    leaves `fit()` at the end of this step, on this rank."""
    if not is_true(assign.value):
        return False
    for target in assign.targets:
        chain = dotted_name(target.target) or ""
        owner, _, attribute = chain.rpartition(".")
        if attribute == LIGHTNING_STOP_FLAG and "trainer" in identifier_words(owner.rpartition(".")[2]):
            return True
    return False


def _shared_afterwards(model: "ModuleModel", branch: "BranchSite", assign: cst.CSTNode) -> bool:
    """After the guard, the flag goes through a collective (`trainer.should_stop =
    trainer.strategy.reduce_boolean_decision(trainer.should_stop, all=False)`): every rank ends up
    with the same decision."""
    facts = model.facts
    assert isinstance(assign, cst.Assign)
    flags = {dotted_name(target.target) for target in assign.targets}
    for site in facts.calls_in_statements(list(branch.context.statements_after())):
        mentioned = {dotted_name(node) for node in walk(site.node) if isinstance(node, (cst.Name, cst.Attribute))}
        if flags & mentioned and model.ranks.collective_reached(site) is not None:
            return True
    return False


def _other_arm_exits(node: cst.If, arm: bool, kind: str) -> bool:
    other = node.orelse if arm else node.body
    return other is not None and any(found == kind for _, found in _exit_statements(other))


def _collective_the_others_reach(
    model: "ModuleModel", branch: "BranchSite", loop: Optional["LoopSite"], kind: str
) -> Optional[CollectiveReach]:
    """The collective every rank makes after the exit point, in the loop's body: its next
    iteration (for `continue`, the rest of this one)."""
    facts = model.facts
    ranks = model.ranks
    if loop is None:
        # A `return` outside any loop is most often an error exit of the entry function: the
        # process ends, and the launcher stops the others.
        return None
    if ranks.runs_on_one_rank_only(loop.context) or ranks.after_other_ranks_left(loop.context):
        return None  # only one rank runs the loop at all
    candidates: list["CallSite"] = []
    for site in facts.calls:
        if site.context.scope is not branch.context.scope or loop not in site.context.loops:
            continue
        if (branch.node, True) in site.context.branches or (branch.node, False) in site.context.branches:
            continue  # in the guard itself: the same ranks
        if kind == "continue" and order(branch.context.path, site.context.path) != "before":
            continue
        candidates.append(site)
    for site in candidates:
        if ranks.made_under_rank_condition(site):
            continue
        reach = ranks.collective_reached(site)
        if reach is not None and not reach.subgroup:
            return reach
        if ranks.wrapped_forward_reached(site):
            return CollectiveReach("forward of the DDP/FSDP-wrapped model")
    return None


def leaving_ifs(facts: "ModuleFacts") -> dict[int, list[tuple[int, cst.If]]]:
    """id(block) -> the `if` statements of that block (with their index) whose body ends by
    leaving (`return`, `raise`, `continue`, `break`) and which have no `else:`: the candidates
    for an early exit of some ranks, found once per file."""
    out: dict[int, list[tuple[int, cst.If]]] = {}
    for branch in facts.branches:
        node = branch.node
        if isinstance(node, cst.If) and node.orelse is None and ends_with(node.body, BLOCK_EXITS) and branch.context.path:
            body, index = branch.context.path[-1]
            if index < len(body) and body[index] is node:
                out.setdefault(id(body), []).append((index, node))
    return out


def other_ranks_leave_at(
    model: "ModuleModel", context: "Context", candidates: dict[int, list[tuple[int, cst.If]]]
) -> Optional[cst.CSTNode]:
    """The exit by which the other ranks leave before this place, maybe under a setting:
    `if rank != 0: continue` in a loop, `if rank != 0 and not cfg.sharded: return`, where the
    place does not itself require the opposite setting (every rank but rank 0 leaves whenever
    the setting holds); None if there is none. `candidates`: `leaving_ifs(facts)`."""
    facts = model.facts
    for body, index in context.path:
        for position, statement in candidates.get(id(body), ()):
            if position >= index:
                continue
            settings = _settings_of_other_ranks_exit(model, statement.test, context)
            if settings is not None and not any(_required_false(facts, part, context) for part in settings):
                return _last_statement(statement.body)
    return None


def _last_statement(block: cst.BaseSuite) -> cst.CSTNode:
    last = block.body[-1]
    return last.body[-1] if isinstance(last, cst.SimpleStatementLine) else last


def _settings_of_other_ranks_exit(
    model: "ModuleModel", test: cst.BaseExpression, context: "Context"
) -> Optional[list[cst.BaseExpression]]:
    """For `other_ranks_guard and S1 and S2 ...` whose other parts do not read the rank: those
    parts that can be false in a distributed run (the settings under which the others leave);
    None when the test is no such exit of the other ranks."""
    ranks = model.ranks
    scope = context.scope
    parts = and_parts(test)
    guards = [part for part in parts if ranks.is_other_ranks_guard(part, scope)]
    settings = [part for part in parts if not any(part is guard for guard in guards)]
    if not guards or any(ranks.depends_on_rank(part, scope) for part in settings):
        return None
    if any(ranks.distributed_polarity(part, scope) is False for part in settings):
        return None  # `not dist.is_initialized() and rank != 0`: never in a distributed run
    return [part for part in settings if ranks.distributed_polarity(part, scope) is None]




def _required_false(facts: "ModuleFacts", setting: cst.BaseExpression, context: "Context") -> bool:
    """An `if` around the place holds only when `setting` is false: its test is `not setting`
    (the place in its body) or `setting` (the place in its `else:`)."""
    code = facts.module.code_for_node
    wanted = _text(code(setting))
    inner = _negated(setting)
    negated = _text(code(inner)) if inner is not None else None
    for branch, in_body in context.branches:
        test = branch.test
        test_inner = _negated(test)
        if in_body and test_inner is not None and _text(code(test_inner)) == wanted:
            return True
        if in_body and negated is not None and _text(code(test)) == negated:
            return True
        if not in_body and _text(code(test)) == wanted:
            return True
    return False


def _negated(test: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`x` for `not x`, else None."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return test.expression
    return None


def _text(code: str) -> str:
    return "".join(code.split())


def keys_assigned_on_one_rank(model: "ModuleModel") -> frozenset[str]:
    """The names and attribute chains some single-rank arm of the file assigns: the only ones
    whose value can be set on one rank (found once per file, so that most conditions need no
    reaching-definitions question)."""
    facts = model.facts
    ranks = model.ranks
    out: set[str] = set()
    for branch in facts.branches:
        node = branch.node
        if not isinstance(node, cst.If):
            continue
        arm = ranks.single_rank_arm(branch)
        block = node.body if arm else node.orelse if arm is False else None
        if block is None:
            continue
        for sub in walk(block):
            out |= _assigned_keys(sub)
    return frozenset(out)


def _assigned_keys(statement: cst.CSTNode) -> set[str]:
    """The names and attribute chains an assignment statement writes (none for anything else)."""
    if isinstance(statement, cst.Assign):
        targets = [target.target for target in statement.targets]
    elif isinstance(statement, (cst.AnnAssign, cst.AugAssign)):
        targets = [statement.target]
    else:
        return set()
    return {key for target in targets for key in _keys_in(target)}


def keys_holding_clock_times(facts: "ModuleFacts") -> frozenset[str]:
    """The names and attribute chains an assignment gives a value read off the clock
    (`last = time.time()`, `spent = time.time() - start`): read off the file's clock calls."""
    out: set[str] = set()
    for site in facts.calls_named(*WALL_CLOCK_READS):  # by the file's index, in source order
        statement = site.context.current_statement()
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            out |= _assigned_keys(small)
    return frozenset(out)


def may_diverge(facts: "ModuleFacts", test: cst.BaseExpression, watched: frozenset[str]) -> bool:
    """A cheap first look for `divergent_condition`: the test reads the clock, or names a key of
    `watched` (`keys_assigned_on_one_rank` | `keys_holding_clock_times`)."""
    for node in walk(test):
        if isinstance(node, cst.Call) and not facts.qualified_names(node.func).isdisjoint(WALL_CLOCK_READS):
            return True
        if isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) in watched:
            return True
    return False


def divergent_condition(model: "ModuleModel", branch: "BranchSite") -> Optional[str]:
    """Why the test of an `if` may hold on some ranks and not on others, or None: it reads the
    wall clock, or a variable only one rank assigns. A value handed to a collective in the same
    function (`dist.broadcast(flag, 0)`) is taken as agreed on."""
    facts = model.facts
    scope = branch.context.scope
    ranks = model.ranks
    if ranks.runs_on_one_rank_only(branch.context):
        return None  # only one rank gets here anyway
    compared = _ordered_operands(branch.test)
    local = {dotted_name(node) for node in _comprehension_targets(branch.test)}
    for node in walk(branch.test):
        timed = id(node) in compared  # a time only matters compared by size (`is None` is the same everywhere)
        if timed and isinstance(node, cst.Call) and not facts.qualified_names(node.func).isdisjoint(WALL_CLOCK_READS):
            return "reads the clock (each rank's differs)"
        if not isinstance(node, (cst.Name, cst.Attribute)):
            continue
        key = dotted_name(node)
        if key is None or key in local:
            continue
        bindings = [b for b in scope.lookup(key) if b.context is not None]
        if not bindings:
            continue
        reached = facts.reaching(bindings, node)
        reason = None
        if timed and any(_clock_value(facts, b.value) for b in reached):
            reason = f"reads `{key}`, a clock time (each rank's differs)"
        one_rank = [
            b for b in reached
            if b.kind in ("assign", "unpack") and b.context is not None and ranks.runs_on_one_rank_only(b.context)
        ]
        if reason is None and one_rank and len(one_rank) < len(reached):
            reason = f"reads `{key}`, set on one rank"
        # asked last: it looks at every call of the function
        if reason is not None and not _handed_to_collectives(model, branch, {key}):
            return reason
    return None


_ORDERING = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


def _ordered_operands(test: cst.BaseExpression) -> set[int]:
    """ids of the nodes inside the operands of `<`, `<=`, `>`, `>=` comparisons of a test."""
    out: set[int] = set()
    for node in walk(test):
        if isinstance(node, cst.Comparison) and any(isinstance(c.operator, _ORDERING) for c in node.comparisons):
            out.update(id(sub) for sub in walk(node))
    return out


def _comprehension_targets(test: cst.BaseExpression) -> list[cst.CSTNode]:
    """The names a comprehension inside the test binds (`any(v in data for v in keys)`: `v`),
    which no assignment of the function reaches."""
    return [
        sub for node in walk(test) if isinstance(node, cst.CompFor)
        for sub in walk(node.target) if isinstance(sub, (cst.Name, cst.Attribute))
    ]


def _clock_value(facts: "ModuleFacts", value: Optional[cst.BaseExpression]) -> bool:
    if value is None:
        return False
    return any(
        isinstance(node, cst.Call) and not facts.qualified_names(node.func).isdisjoint(WALL_CLOCK_READS)
        for node in walk(value)
    )


def _handed_to_collectives(model: "ModuleModel", branch: "BranchSite", keys: set[str]) -> set[str]:
    """Those of `keys` passed to (or assigned from) a collective in the function of the branch."""
    facts = model.facts
    ranks = model.ranks
    out: set[str] = set()
    for site in facts.calls:
        if site.context.scope is not branch.context.scope:
            continue
        mentioned = _keys_in(site.node)
        statement = site.context.current_statement()
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                mentioned |= _assigned_keys(small)
        wanted = mentioned & keys
        if wanted and ranks.collective_reached(site, on_one_rank=True) is not None:
            out |= wanted
    return out


def _keys_in(node: cst.CSTNode) -> set[str]:
    return {key for sub in walk(node) if isinstance(sub, (cst.Name, cst.Attribute)) and (key := dotted_name(sub))}


def calls_into_shared_helpers(model: "ModuleModel", site: "CallSite") -> Iterator["CallSite"]:
    """Inside the file's functions that only one rank ever calls and that `site` (a call under a
    rank guard) reaches: the calls that enter a function other callers share (`get_repo_root()`
    that every rank also calls, with its barrier), where the fix goes when the helper stays
    shared. A call into another one-rank function is followed instead; a collective made directly
    in one-rank code is named by the finding at the guarded call already."""
    facts = model.facts
    ranks = model.ranks
    seen: set[int] = set()
    pending: list[tuple["CallSite", int]] = [(site, 0)]
    while pending:
        call, depth = pending.pop()
        for function, _ in facts.functions_called_by(call):
            if id(function) in seen or depth >= _MAX_CALL_DEPTH or not _only_one_rank_calls(model, function):
                continue
            seen.add(id(function))
            for inner in facts.calls_by_function.get(id(function), []):
                reach = ranks.collective_reached(inner, on_one_rank=True)
                if reach is None or reach.subgroup:
                    continue
                deeper = [f for f, _ in facts.functions_called_by(inner) if _only_one_rank_calls(model, f)]
                if deeper:
                    pending.append((inner, depth + 1))
                elif ranks.collective_name(inner) is None:
                    yield inner  # the call into the shared helper (the guarded call names a direct one)


def _only_one_rank_calls(model: "ModuleModel", function: "FunctionInfo") -> bool:
    facts = model.facts
    callers = facts.call_sites_of(function)
    return bool(callers) and all(model.ranks.call_runs_on_one_rank_only(c) for c, _ in callers)
