"""Reaching definitions: which assignments of a name (or attribute chain) can reach a use, in
program order.

Read off the statement paths the single pass records for every binding and every use (see
`records.Context`), instead of building a control-flow graph: within one function (or the
module body) a binding reaches a use when

- it runs before the use (an earlier statement, the statement around the use: `for x in ...`,
  `with ... as f`), or both sit in one loop (the next iteration sees it);
- no later assignment of the same key runs on every path between the two (an assignment directly
  in a block the use sits in, or in a `with` body / `finally:` around it, earlier than the use);
- the block it sits in does not leave the function after it (`return`, `raise`) before the use.

`try` bodies, loop bodies and `if` arms are conditional: an assignment there never hides an
earlier one. Where the order cannot be told (bindings in another function or on a class, uses in
different arms of one `try`), every binding is kept: the answer is a superset, as before.
"""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from ddplint.analysis.records import Binding, Context

# Kinds of binding that happen every time their statement runs (a loop target only if the
# iterable is not empty; a parameter is the start of the function, never after a use).
_DEFINITE = frozenset({"assign", "unpack", "with"})

Path = Sequence[tuple[Sequence[cst.BaseStatement], int]]


def reaching(bindings: Sequence[Binding], use: Context) -> list[Binding]:
    """The bindings of one key (as the scope lookup found them) that may reach a use."""
    use, later = lift(bindings, use)
    local = [b for b in bindings if b.context is not None and b.context.scope is use.scope]
    if not local:
        return list(bindings)
    # The function's own parameters: bound before its first statement.
    params = [b for b in bindings if b.kind == "param" and b.context is None and b.scope is use.scope]
    kept = [b for b in bindings if (b.context is None and b not in params) or (b.context is not None and b.context.scope is not use.scope)]
    killers: list[tuple[Optional[Binding], Path]] = [(b, b.context.path) for b in local if b.kind in _DEFINITE and b.context is not None]
    killers += [(None, path) for path in _both_arms_assign([path for _, path in killers])]
    if not later:
        kept += [p for p in params if not any(_hides(path, (), use.path) for _, path in killers)]
    else:
        kept += params
    for binding in local:
        where = binding.context
        assert where is not None  # `local` holds only bindings with a place
        if not later and not _runs_before(where, use):
            continue
        if later and order(where.path, use.path) in ("after", "inside"):
            kept.append(binding)  # assigned after the `def`, before some call of it
            continue
        if _leaves_before(where.path, use.path):
            continue
        if any(killer is not binding and _hides(path, where.path, use.path) for killer, path in killers):
            continue
        kept.append(binding)
    return kept


def _both_arms_assign(killers: Sequence[Path]) -> list[Path]:
    """The paths of `if` statements with an `else:` whose two arms each assign the key directly
    in their body (`if final: vae = load() else: vae = unwrap(vae)`): together they replace
    every earlier value, as one assignment at the `if` would."""
    arms: dict[int, tuple[Path, set[bool]]] = {}
    for path in killers:
        if len(path) < 2:
            continue
        block = path[-1][0]
        outer_block, outer_index = path[-2]
        statement = outer_block[outer_index]
        if not isinstance(statement, cst.If) or not isinstance(statement.orelse, cst.Else):
            continue
        if statement.body.body is block:
            arm = True
        elif statement.orelse.body.body is block:
            arm = False
        else:
            continue
        arms.setdefault(id(statement), (tuple(path[:-1]), set()))[1].add(arm)
    return [path for path, seen in arms.values() if seen == {True, False}]


def lift(bindings: Sequence[Binding], use: Context) -> tuple[Context, bool]:
    """A use inside a function nested in the bindings' scope (a closure, a `lambda`'s enclosing
    `def`) is judged where that function is defined; it runs later (when called), so bindings
    after the definition reach it too: (the position to judge at, whether it runs later)."""
    owner = next((b.context.scope for b in bindings if b.context is not None), None)
    later = False
    while owner is not None and use.scope is not owner and use.scope.defined_at is not None:
        use, later = use.scope.defined_at, True
    return use, later


def order(first: Path, second: Path) -> str:
    """How two statement paths of one function relate: "before" / "after" (in one block),
    "same" statement, "around" (the first statement holds the second: a `for` header and its
    body), "inside" (the converse), "apart" (different blocks of one compound statement)."""
    for (first_block, first_index), (second_block, second_index) in zip(first, second):
        if first_block is not second_block:
            return "apart"
        if first_index != second_index:
            return "before" if first_index < second_index else "after"
    if len(first) == len(second):
        return "same"
    return "around" if len(first) < len(second) else "inside"


def _runs_before(binding: Context, use: Context) -> bool:
    relation = order(binding.path, use.path)
    if relation in ("before", "around", "apart"):
        return True
    if {id(loop) for loop in binding.loops} & {id(loop) for loop in use.loops}:
        return True  # the next iteration of a loop around both
    if relation == "inside":
        # `while not done(x): ... x = ...`: a `while` test runs again after its body.
        body, index = use.path[-1] if use.path else (None, 0)
        return body is not None and isinstance(body[index], cst.While)
    return False


def _hides(killer: Path, binding: Path, use: Path) -> bool:
    """Whether an assignment on every path to the use, after `binding`, hides it."""
    for depth in _definite_depths(killer):
        block, killer_index = killer[depth]
        if len(use) <= depth or use[depth][0] is not block:
            continue
        use_index = use[depth][1]
        if use_index <= killer_index:
            continue  # the use comes first (or is the assignment's own value: `x = f(x)`)
        if not (len(binding) > depth and binding[depth][0] is block):
            return True  # the binding is outside the block: every path to the use passes the killer
        binding_index = binding[depth][1]
        if binding_index == use_index:
            # Inside the statement that holds the use: it reaches only if it runs before the use
            # there (`if flag: model = DP(model)` after the use `DP(model)` comes round the loop,
            # through the killer).
            if order(binding[depth + 1 :], use[depth + 1 :]) in ("same", "after", "inside"):
                if not _loop_around_both(binding, use, depth):
                    return True
        elif not killer_index <= binding_index < use_index:
            return True
    return False


def _loop_around_both(first: Path, second: Path, depth: int) -> bool:
    """A loop statement, at `depth` or below, that holds both places: its next iteration reaches
    the earlier one without passing the statements before the loop."""
    for level in range(depth, min(len(first), len(second))):
        block, index = first[level]
        if second[level][0] is not block or second[level][1] != index:
            return False
        if isinstance(block[index], (cst.For, cst.While)):
            return True
    return False


def _definite_depths(path: Path) -> list[int]:
    """Depths of `path` at which its statement runs whenever the block at that depth runs: its
    own depth, and above it while the block is a `with` body or a `finally:` (which always run)."""
    depths = [len(path) - 1] if path else []
    depth = len(path) - 1
    while depth > 0:
        block = path[depth][0]
        outer_block, outer_index = path[depth - 1]
        owner = outer_block[outer_index]
        always = (isinstance(owner, cst.With) and owner.body.body is block) or (
            isinstance(owner, cst.Try) and owner.finalbody is not None and owner.finalbody.body.body is block
        )
        if not always:
            break
        depth -= 1
        depths.append(depth)
    return depths


def _leaves_before(binding: Path, use: Path) -> bool:
    """The binding's block returns (or raises, outside a `try`) after it, before reaching the
    use: `if not distributed: gpu = 0; return` never reaches a use after the `if`."""
    for depth, (block, index) in enumerate(binding):
        exit_index = _first_exit(block, index, guarded=_inside_try(binding, depth))
        if exit_index is None:
            continue
        if len(use) > depth and use[depth][0] is block and use[depth][1] <= exit_index:
            continue  # the use sits between the binding and the exit
        return True
    return False


def _first_exit(block: Sequence[cst.BaseStatement], index: int, guarded: bool):
    # Scans the rest of a block for each binding that reaches a use (hundreds of statements in
    # a long `main()`): libcst's node classes are never subclassed, so their types are compared
    # directly, not through ABCMeta's isinstance (three times slower).
    exits = (cst.Return,) if guarded else (cst.Return, cst.Raise)
    for position in range(index + 1, len(block)):
        statement = block[position]
        # `if x: y = 0; return` puts small statements straight into the block
        smalls = statement.body if type(statement) is cst.SimpleStatementLine else (statement,)
        if any(type(small) in exits for small in smalls):
            return position
    return None


def _inside_try(path: Path, depth: int) -> bool:
    """Whether the block at `depth` sits (at any level) in a `try` body, where a `raise` is
    caught rather than leaving the function."""
    for level in range(depth, 0, -1):
        block = path[level][0]
        outer_block, outer_index = path[level - 1]
        owner = outer_block[outer_index]
        if isinstance(owner, cst.Try) and owner.body.body is block:
            return True
    return False


def hidden_in_arms(binding: Binding, others: Sequence[Binding], use: Context) -> list[tuple[cst.If, bool]]:
    """The `if` arms that, when taken, replace `binding` before the use: `gpu = 0` then
    `if distributed: gpu = local_rank` ... `use(gpu)` gives [(that if, True)]; the 0 reaches
    the use only when the arm is not taken."""
    use, _ = lift((binding,), use)
    if binding.context is None or binding.context.scope is not use.scope:
        return []
    found = []
    for other in others:
        if other is binding or other.kind not in _DEFINITE or other.context is None:
            continue
        if other.context.scope is not use.scope:
            continue
        arm = _arm_replacing(other.context.path, binding.context.path, use.path)
        if arm is not None:
            found.append(arm)
    return found


def _arm_replacing(killer: Path, binding: Path, use: Path):
    for depth in _definite_depths(killer):
        if depth == 0:
            continue
        block = killer[depth][0]
        outer_block, outer_index = killer[depth - 1]
        statement = outer_block[outer_index]
        if not isinstance(statement, cst.If):
            continue
        if statement.body.body is block:
            in_body = True
        elif isinstance(statement.orelse, cst.Else) and statement.orelse.body.body is block:
            in_body = False
        else:
            continue
        # the `if` sits before the use in a block the use is in, and after the binding
        level = depth - 1
        if len(use) <= level or use[level][0] is not outer_block or use[level][1] <= outer_index:
            continue
        if len(binding) > level and binding[level][0] is outer_block and binding[level][1] >= outer_index:
            continue
        return statement, in_body
    return None
