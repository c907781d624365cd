"""What is a rank and what is a rank guard: the conditions that hold on some ranks only.

Rank guards are written a dozen ways in real code (`rank == 0`, `not rank`, `local_rank in (-1,
0)`, `is_main_process()`, `accelerator.is_main_process`, `trainer.is_global_zero`, `master_process
= ddp_rank == 0`, `args.rank % ngpus_per_node == 0`); this module is the one place that knows them.
It answers three-valued questions about conditions (true when distributed, when single-process, or
unknown), which arm of a branch one rank alone runs, and whether a call is made by one rank only.
Which calls are collectives is analysis/collectives.py's question.
"""

from __future__ import annotations

import math
import re
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from ddplint.analysis.options import declared
from ddplint.analysis.syntax import (
    FUNCTION_EXITS,
    alternatives,
    and_parts,
    dotted_name,
    ends_with,
    identifier_words,
    int_value,
    last_name,
    receiver,
    string_value,
    value_walk,
    walk,
)
from ddplint.analysis.torch_api import (
    ACCELERATOR_ONE_PROCESS_DECORATORS,
    PER_PROCESS_PREFIXES,
    PER_PROCESS_VALUES,
    PROCESS_GROUP_STARTERS,
    RANK_ENV_VARS,
    RANK_FUNCTIONS,
    RANK_ZERO_NAMES,
    RANK_ZERO_ONLY_DECORATORS,
    SPAWNERS,
    SUBGROUP_RANK_FUNCTIONS,
)

if TYPE_CHECKING:
    from ddplint.analysis.facts import ModuleFacts
    from ddplint.analysis.flow import Flow
    from ddplint.analysis.records import BranchSite, CallSite, Context, FunctionInfo, Scope


_RANK_GETTER = re.compile(r"^get_(?:\w+_)?rank$")
_RANK_WORD = re.compile(r"(?:^|_)rank(?:_|$)|(?:^|_)process_index$|(?:^|_)ordinal$")
# "rank" in these names is linear algebra, not a process: `lora_rank`, `low_rank`, `matrix_rank`.
# "per ... rank" is an amount each rank has: `num_tokens_per_dp_rank`, `batch_size_per_rank`.
_NOT_PROCESS_RANK = re.compile(r"lora|low_?rank|matrix|tensor_rank|svd|adapter|ranking|rank_?r$|per_(?:\w+_)?rank$")


def _rank_guard_words() -> tuple[bytes, ...]:
    """Lower-case words of which a single-rank guard (`RankGuards.single_rank_arm`) or an early
    exit of the other ranks (`after_other_ranks_left`) holds one in its own text: every such
    test ends, through names, calls, comparisons and `and` / `or` / `not` (and the values of
    names assigned in the file), in `RankGuards.is_rank` (a name with `_RANK_WORD`, a
    `RANK_FUNCTIONS` or `get_*_rank` call, horovod's or a group's `rank()`, one of
    `RANK_ENV_VARS` read from the environment) or in a name of `RANK_ZERO_NAMES`. Matched in
    any case (names are lower-cased before they are compared). A file without any of them has
    no rank guard: the screen needs no parse to know it (DDP007, DDP010). Only a name or key
    spelled with escapes (`"R\\x41NK"`) would escape this."""
    words = {"rank", "process_index", "ordinal"} | set(RANK_FUNCTIONS) | RANK_ZERO_NAMES | {v.lower() for v in RANK_ENV_VARS}
    return tuple(sorted(w.encode() for w in words if not any(o != w and o in w for o in words)))


RANK_GUARD_WORDS = _rank_guard_words()

_MAX_DEPTH = 4  # how far a value is followed through assignments
# Calls that end the process: the ranks that make one leave every later collective to the others.
_PROCESS_EXITS = frozenset({"sys.exit", "os._exit", "builtins.exit", "builtins.quit"})
_BUILTIN_EXITS = frozenset({"exit", "quit"})


def _mentions_name(value: cst.CSTNode, dotted: Optional[str]) -> bool:
    """`value` reads the name or attribute chain `dotted` (`args.rank * n + gpu` reads `args.rank`)."""
    return dotted is not None and any(
        isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) == dotted for node in walk(value)
    )


def normalised(code: str) -> str:
    return "".join(code.split())


def _non_number_text(node: cst.BaseExpression) -> bool:
    """A string literal that is no number: `"cpu"`, not `"0"` (`os.environ["RANK"] == "0"` is
    rank 0). A rank equal to it is a device name, set only on a single-process path."""
    text = string_value(node)
    return text is not None and not text.strip().lstrip("-").isdigit()


def _pins_other_value(fact: cst.BaseExpression, condition: cst.BaseExpression) -> bool:
    """`x == A` makes `x != B` true for another constant B (names, attributes or literals)."""
    if not (isinstance(fact, cst.Comparison) and isinstance(condition, cst.Comparison)):
        return False
    if len(fact.comparisons) != 1 or len(condition.comparisons) != 1:
        return False
    pinned, excluded = fact.comparisons[0], condition.comparisons[0]
    if not (isinstance(pinned.operator, cst.Equal) and isinstance(excluded.operator, cst.NotEqual)):
        return False
    constants = (cst.Name, cst.Attribute, cst.SimpleString, cst.Integer)
    if not (isinstance(pinned.comparator, constants) and isinstance(excluded.comparator, constants)):
        return False
    same_subject = normalised(_code(fact.left)) == normalised(_code(condition.left))
    return same_subject and normalised(_code(pinned.comparator)) != normalised(_code(excluded.comparator))


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _or_sides(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`a or b or c` as [a, b, c] (parentheses around a side kept as that side)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or) and not test.lpar:
        return _or_sides(test.left) + _or_sides(test.right)
    return [test]


_NEGATED_OPERATORS = {
    cst.Equal: "!=", cst.NotEqual: "==", cst.Is: "is not", cst.IsNot: "is", cst.In: "not in", cst.NotIn: "in",
}


def _negation(test: cst.BaseExpression) -> str:
    """The text of `not test`, spelled as code usually spells it: `not x` -> `x`, `a == b` ->
    `a != b`, `a is None` -> `a is not None`, `x` -> `not x`; anything else `not (test)`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _code(test.expression)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        negated = _NEGATED_OPERATORS.get(type(target.operator))
        if negated is not None:
            return f"{_code(test.left)} {negated} {_code(target.comparator)}"
    if isinstance(test, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return f"not {_code(test)}"
    return f"not ({_code(test)})"


def literal_flags(arguments: dict) -> frozenset:
    """Parameters a call passes a literal True / False for, as ("flag:name", value)."""
    out = set()
    for name, value in arguments.items():
        if isinstance(value, cst.Name) and value.value in ("True", "False"):
            out.add((f"flag:{name}", value.value == "True"))
    return frozenset(out)


def decided_value(test: cst.BaseExpression, leaf: Callable[[cst.BaseExpression], Optional[bool]]) -> Optional[bool]:
    """The value of a condition built with and / or / not from parts whose value `leaf` knows
    (None: unknown). Decided where Python's short-circuit would decide it: `x and False` is
    False whatever x is."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = decided_value(test.expression, leaf)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left, right = decided_value(test.left, leaf), decided_value(test.right, leaf)
        if isinstance(test.operator, cst.And):
            return False if False in (left, right) else (True if left is right is True else None)
        return True if True in (left, right) else (False if left is right is False else None)
    return leaf(test)


def flags_truth(test: cst.BaseExpression, flags: dict) -> Optional[bool]:
    """The value of a condition built with and / or / not from flags of known value; None when
    it depends on anything else."""
    return decided_value(test, lambda part: flags.get(f"flag:{part.value}") if isinstance(part, cst.Name) else None)


def attribute_read(call: cst.Call) -> Optional[str]:
    """`getattr(trainer, "global_rank", 0)` -> "global_rank": the attribute a `getattr` with a
    literal name reads (the default is what an object without it gives, as on one process)."""
    if last_name(call.func) != "getattr" or not isinstance(call.func, cst.Name) or len(call.args) < 2:
        return None
    if any(arg.keyword is not None or arg.star for arg in call.args[:2]):
        return None
    return string_value(call.args[1].value)


def environment_key(call: cst.Call) -> Optional[str]:
    """`os.environ.get("RANK")` / `os.getenv("RANK")` -> "RANK"."""
    name = last_name(call.func)
    owner_node = receiver(call.func)
    owner = dotted_name(owner_node) if owner_node is not None else None
    reads_env = (name == "get" and owner is not None and owner.split(".")[-1] == "environ") or name == "getenv"
    if reads_env and call.args and call.args[0].keyword is None:
        return string_value(call.args[0].value)
    return None


def _compared_name(left: cst.BaseExpression) -> str:
    """What the left side of a comparison reads, by name: `world_size`, `dist.get_world_size()`,
    or the key of an environment read, also through `int(...)` (`int(os.environ.get("WORLD_SIZE",
    "1"))`, `int(os.environ["WORLD_SIZE"])`)."""
    if isinstance(left, cst.Call) and last_name(left.func) == "int" and len(left.args) == 1:
        left = left.args[0].value
    key = environment_key(left) if isinstance(left, cst.Call) else _environ_subscript_key(left)
    if key is not None:
        return key
    if isinstance(left, cst.Call):
        left = left.func
    return dotted_name(left) or last_name(left) or ""


def _literal_item_key(node: cst.BaseExpression) -> Optional[str]:
    """`cfg["rank"]` -> "rank": a subscript by a string literal (not of `os.environ`)."""
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and _environ_subscript_key(node) is None:
        element = node.slice[0].slice
        if isinstance(element, cst.Index):
            return string_value(element.value)
    return None


def _environ_subscript_key(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        owner = dotted_name(node.value)
        element = node.slice[0].slice
        if owner and owner.split(".")[-1] == "environ" and isinstance(element, cst.Index):
            return string_value(element.value)
    return None


class RankGuards:
    """Answers "is this expression a rank?" and "is this condition true only on rank 0?", and
    which places of the file one rank alone reaches (collectives.py builds on it)."""

    def __init__(self, facts: "ModuleFacts", flow: "Flow") -> None:
        self.facts = facts
        self.flow = flow
        # (id(block), id(scope)) -> [block, statements looked at, first early exit of the others]
        self._exits_of_others: dict[tuple[int, int], list] = {}
        # (id(test), id(scope)) -> (test, scope, is_single_rank_guard's answer)
        self._single_rank_guards: dict[tuple[int, int], tuple[cst.BaseExpression, "Scope", bool]] = {}

    # -- ranks ------------------------------------------------------------------------------
    def is_rank(self, node: cst.BaseExpression, scope: "Scope", depth: int = 0) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(node, cst.NamedExpr):  # `(rank := dist.get_rank()) == 0`
            return self.is_rank(node.value, scope, depth + 1)
        if isinstance(node, (cst.Name, cst.Attribute)):
            name: Optional[str] = (last_name(node) or "").lower()
            bindings = scope.lookup(dotted_name(node) or "")
            assigned = [(b.value, b.scope or scope) for b in bindings if b.kind == "assign" and b.value is not None]
            own = dotted_name(node)
            rebuilt = any(_mentions_name(value, own) for value, _ in assigned)
            if assigned and all(b.kind == "assign" for b in bindings) and not rebuilt:
                # `rank = args.lora_rank`: what it is assigned decides, not what it is called
                return any(self.is_rank(value, value_scope, depth + 1) for value, value_scope in assigned)
            # (`args.rank = args.rank * ngpus_per_node + gpu` is built from its own earlier value:
            # what it is called decides, as for that earlier value)
            if name and _RANK_WORD.search(name) and not _NOT_PROCESS_RANK.search(name):
                return True
            return False
        if isinstance(node, cst.Call):
            name = last_name(node.func)
            if name in RANK_FUNCTIONS:
                return True
            if name and _RANK_GETTER.match(name) and not _NOT_PROCESS_RANK.search(name):
                return True  # Megatron-style `mpu.get_data_parallel_rank()`
            if name in ("rank", "local_rank") and self.facts.imports.imports_any(("horovod",)):
                return True  # hvd.rank(), hvd.local_rank()
            owner = receiver(node.func)
            if name == "rank" and owner is not None and "group" in identifier_words(last_name(owner) or ""):
                return True  # `self.data_parallel_group.rank()`: this process's rank in a group
            if environment_key(node) in RANK_ENV_VARS:
                return True
            read = (attribute_read(node) or "").lower()
            if read and _RANK_WORD.search(read) and not _NOT_PROCESS_RANK.search(read):
                return True  # `getattr(self, "global_rank", 0)`, as `self.global_rank`
            # int(os.environ["LOCAL_RANK"]), str(rank)
            if name in ("int", "str") and node.args:
                return self.is_rank(node.args[0].value, scope, depth + 1)
            return False
        if _environ_subscript_key(node) in RANK_ENV_VARS:
            return True
        key = _literal_item_key(node)
        if key is not None:
            return self._rank_item(node, key, scope, depth)
        if isinstance(node, cst.BinaryOperation):
            # `args.rank % ngpus_per_node`, `node_rank * gpus_per_node + local_rank`
            return self.is_rank(node.left, scope, depth + 1) or self.is_rank(node.right, scope, depth + 1)
        options = alternatives(node)  # `dist.get_rank() if dist.is_initialized() else 0`
        if len(options) > 1:
            return any(self.is_rank(option, scope, depth + 1) for option in options)
        return False

    def _rank_item(self, node: cst.BaseExpression, key: str, scope: "Scope", depth: int) -> bool:
        """`cfg["rank"]`: the value a `cfg["rank"] = dist.get_rank()` (or a literal dict) puts
        there decides; where none is seen (a config read from a file), the key names it, as an
        attribute's name does (`args.rank`)."""
        held = [s for s in self.flow.sources(node, scope) if s.node is not None and s.node is not node]
        if held:
            return any(isinstance(s.node, cst.BaseExpression) and self.is_rank(s.node, s.scope, depth + 1) for s in held)
        word = key.lower()
        return bool(_RANK_WORD.search(word)) and not _NOT_PROCESS_RANK.search(word)

    def one_rank_per_group(self, test: cst.BaseExpression, scope: "Scope") -> bool:
        """The condition compares a rank within a sub-group (`mpu.get_tensor_model_parallel_rank()
        == 0`, `dist.get_rank(group=tp_group) == 0`), itself or through the values its names hold:
        one rank of every model-parallel group passes, not one rank of the whole job."""
        candidates: list[cst.CSTNode] = [test]
        for node in walk(test):
            if isinstance(node, cst.Name):
                candidates += [s.node for s in self.flow.sources(node, scope) if s.node is not None]
        for candidate in candidates:
            for node in walk(candidate):
                if not isinstance(node, cst.Call):
                    continue
                name = last_name(node.func)
                if name in SUBGROUP_RANK_FUNCTIONS:
                    return True
                if name == "get_rank" and node.args and (node.args[0].keyword is None or node.args[0].keyword.value == "group"):
                    return True
        return False

    def depends_on_rank(self, node: cst.CSTNode, scope: "Scope", depth: int = 0) -> bool:
        """Whether any part of an expression is, or is computed from, a rank
        (`indices[rank::world_size]`, `Subset(ds, my_indices)` with `my_indices = range(rank, ...)`)."""
        if depth > _MAX_DEPTH:
            return False
        for sub in value_walk(node):
            if not isinstance(sub, cst.BaseExpression):
                continue
            if self.is_rank(sub, scope, depth):
                return True
            if isinstance(sub, cst.Name) and self._bound_to(sub, scope, depth, self.depends_on_rank):
                return True
        return False

    def depends_on_clock(self, node: cst.CSTNode, scope: "Scope", depth: int = 0) -> bool:
        """Whether an expression is, or is computed from, something that differs between
        processes started at once: the clock (`time.time()`, `datetime.now()`), the process id,
        OS entropy (`os.urandom`, `secrets`, an unseeded `random.randint`)."""
        if depth > _MAX_DEPTH:
            return False
        for sub in value_walk(node):
            if isinstance(sub, cst.Call):
                qualified = self.facts.qualified_names(sub.func)
                if qualified & PER_PROCESS_VALUES or any(q.startswith(PER_PROCESS_PREFIXES) for q in qualified):
                    return True
            elif isinstance(sub, cst.Name) and self._bound_to(sub, scope, depth, self.depends_on_clock):
                return True
        return False

    # -- rank-0 guards ------------------------------------------------------------------------
    def is_rank_zero_guard(self, test: cst.BaseExpression, scope: "Scope", depth: int = 0) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(test, cst.Comparison):
            return self._compares_rank_to_zero(test, scope, depth)
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            # `not rank` is rank 0; `not is_main_process()` is everyone else.
            return self.is_rank(test.expression, scope, depth + 1)
        if isinstance(test, cst.BooleanOperation):
            left = self.is_rank_zero_guard(test.left, scope, depth + 1)
            right = self.is_rank_zero_guard(test.right, scope, depth + 1)
            if isinstance(test.operator, cst.And):
                return left or right
            # `A or B` holds on rank 0 alone only when each side is rank 0's or the single-process
            # run's (`not dist.is_initialized() or rank == 0`); `kind != LEGACY or rank == 0` may
            # hold on every rank.
            return (left or right) and all(
                guard or self._false_when_distributed(side, scope) for side, guard in ((test.left, left), (test.right, right))
            )
        if isinstance(test, cst.Call):
            if (attribute_read(test) or "").lower() in RANK_ZERO_NAMES:
                return True  # `getattr(trainer, "is_global_zero", False)`, as `trainer.is_global_zero`
            if (last_name(test.func) or "").lower() in RANK_ZERO_NAMES or self.is_declared_guard(test):
                return True
            return self._helper_returns_rank_zero_test(test, depth)
        if isinstance(test, (cst.Name, cst.Attribute)):
            if (last_name(test) or "").lower() in RANK_ZERO_NAMES:
                return True
            if self._property_returns_rank_zero_test(test, scope, depth):
                return True
            return self._bound_to(test, scope, depth, self.is_rank_zero_guard)
        return False

    def _property_returns_rank_zero_test(self, test: cst.BaseExpression, scope: "Scope", depth: int) -> bool:
        """`self.leader` where the class (or a base of the file) defines `@property def
        leader(self): return self.fabric.global_rank == 0`: reading it runs that test."""
        if not (isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value == "self"):
            return False
        owner = scope.class_scope
        if owner is None:
            return False
        methods = self.facts.methods_of(owner.name, test.attr.value)
        return bool(methods) and all(
            _is_property(method.node) and self._returns_rank_zero_test(self, method, depth) for method in methods
        )

    def _helper_returns_rank_zero_test(self, call: cst.Call, depth: int) -> bool:
        """The call runs a function of the file or of a project module whose every value, in a
        distributed run, is a rank-0 test: `def is_visualizer(): return _rank == 0`, `def
        leader(): if not dist.is_initialized(): return True; return dist.get_rank() == 0`."""
        site = self.flow.call_site(call)
        local = self.facts.functions_called_by(site) if site is not None else []
        if local:
            return all(self._returns_rank_zero_test(self, function, depth) for function, _ in local)
        project = self.facts.project
        if project is None:
            return False
        for qualified in self.facts.qualified_names(call.func):
            resolved = project.index.resolve(project.path, qualified)
            # Only a function whose code names a rank word can return a rank test: the others
            # (nearly every helper an `if` calls) cost their module no parse.
            if resolved is None or resolved[1] not in project.index.functions_naming(resolved[0], RANK_GUARD_WORDS):
                continue
            model = project.index.module_model(resolved[0])
            if model is None:
                continue
            facts = model.facts
            for function in facts.functions:
                if function.name == resolved[1] and function.class_name is None and function.scope.parent is facts.module_scope:
                    return self._returns_rank_zero_test(model.ranks, function, depth)
        return False

    @staticmethod
    def _returns_rank_zero_test(ranks: "RankGuards", function: "FunctionInfo", depth: int) -> bool:
        """Every `return` of the function that a distributed run can reach gives a rank-0 test of
        the whole job (a `return True` in the arm of `if not dist.is_initialized():` is the single
        process's)."""
        values = [
            value
            for value, arms in function.returns
            if not any(ranks.distributed_polarity(branch.test, function.scope) == (not in_body) for branch, in_body in arms)
        ]
        # `return mpu.get_model_parallel_rank() == 0` holds on one rank of every model-parallel
        # group, not on one rank of the job: no rank-0 test for the caller
        return bool(values) and all(
            ranks.is_rank_zero_guard(value, function.scope, depth + 1) and not ranks.one_rank_per_group(value, function.scope)
            for value in values
        )

    def is_declared_guard(self, call: cst.Call) -> bool:
        """A call of a function the configuration declares true on rank 0 only
        (`rank-zero-functions`: the project's own `am_i_coordinator()`)."""
        names = self.facts.options.rank_zero_functions
        return bool(names) and declared((dotted_name(call.func), *self.facts.qualified_names(call.func)), names)

    def _false_when_distributed(self, test: cst.BaseExpression, scope: "Scope") -> bool:
        """False on every rank of a distributed run (`not dist.is_initialized()`, `local_rank ==
        -1`), and so for and / or of such tests; unlike `distributed_polarity`, `local_rank == -1
        or args.no_cuda` is not (it holds on every rank with `--no_cuda`). In a distributed run a
        part's polarity is its value."""
        return decided_value(test, lambda part: self.distributed_polarity(part, scope)) is False

    def is_other_ranks_guard(self, test: cst.BaseExpression, scope: "Scope") -> bool:
        """True on every rank but rank 0 (`rank != 0`, `not is_main_process()`, `local_rank not
        in (-1, 0)`): its `else:` is a rank-0 guard."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.is_rank_zero_guard(test.expression, scope) and not self.is_rank(test.expression, scope)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            operator, right = test.comparisons[0].operator, test.comparisons[0].comparator
            if isinstance(operator, (cst.NotEqual, cst.IsNot)) and self._is_zero(right, scope):
                return self.is_rank(test.left, scope)
            if isinstance(operator, cst.GreaterThan) and self._is_zero(right, scope):
                return self.is_rank(test.left, scope)
            if isinstance(operator, cst.NotIn) and isinstance(right, (cst.Tuple, cst.List, cst.Set)):
                values = {int_value(element.value) for element in right.elements}
                return 0 in values and values <= {0, -1} and self.is_rank(test.left, scope)
        return False

    def is_single_rank_guard(self, test: cst.BaseExpression, scope: "Scope") -> bool:
        """True on one rank only: a rank-0 guard, or `rank == leader` for any leader."""
        # Every call and place asks this of each `if` around it: answered once per test and
        # scope (both kept with the answer, so that their ids stay their own).
        key = (id(test), id(scope))
        known = self._single_rank_guards.get(key)
        if known is None:
            known = self._single_rank_guards[key] = (test, scope, self._judged_single_rank_guard(test, scope))
        return known[2]

    def _judged_single_rank_guard(self, test: cst.BaseExpression, scope: "Scope") -> bool:
        if self.is_rank_zero_guard(test, scope):
            return True
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            if isinstance(test.comparisons[0].operator, cst.Equal):
                comparator = test.comparisons[0].comparator
                if int_value(comparator) == -1 or _non_number_text(comparator):
                    # `local_rank == -1`, `rank == "cpu"`: the single-process run, not one rank of many
                    return False
                return self.is_rank(test.left, scope) or self.is_rank(test.comparisons[0].comparator, scope)
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self.is_single_rank_guard(test.left, scope) or self.is_single_rank_guard(test.right, scope)
        return False

    # -- single-process code paths ----------------------------------------------------------------
    def distributed_polarity(self, test: cst.BaseExpression, scope: "Scope", depth: int = 0) -> Optional[bool]:
        """True if the condition holds exactly when running distributed (`args.distributed`,
        `world_size > 1`, `local_rank != -1`, `dist.is_initialized()`), False if it holds exactly
        when running as a single process (`not ddp`, `local_rank == -1`), None if neither."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.distributed_polarity(test.expression, scope, depth + 1)
            return None if inner is None else not inner
        if isinstance(test, cst.Call):
            return True if last_name(test.func) in ("is_initialized", "is_available") else None
        if isinstance(test, cst.BooleanOperation):
            left = self.distributed_polarity(test.left, scope, depth + 1)
            right = self.distributed_polarity(test.right, scope, depth + 1)
            if isinstance(test.operator, cst.And) and (left is None or right is None):
                # `local_rank == -1 and args.evaluate_during_training`: one side pins it
                return left if right is None else right
            # `not dist.is_available() or not dist.is_initialized()`: both sides agree
            if left == right:
                return left
            # `local_rank == -1 or args.no_cuda`: one process, or the CPU: no per-rank GPU either way
            return False if None in (left, right) and False in (left, right) else None
        if isinstance(test, (cst.Name, cst.Attribute)):
            words = set(identifier_words(last_name(test) or ""))
            if words & {"distributed", "ddp", "fsdp"}:  # `args.distributed`, `cfg.enable_fsdp`
                return True
            if "dist" in words and (isinstance(test, cst.Attribute) or scope.lookup(test.value)):
                return True  # `self.dist`, `use_dist`, a `dist: bool` parameter (not the module)
            for binding in scope.lookup(dotted_name(test) or ""):
                if binding.kind == "assign" and binding.value is not None:
                    polarity = self.distributed_polarity(binding.value, scope, depth + 1)
                    if polarity is not None:
                        return polarity
            return None
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            return self._compares_world_or_rank(test, scope, depth)
        return None

    def _compares_world_or_rank(self, test: cst.Comparison, scope: "Scope", depth: int) -> Optional[bool]:
        operator, bound = test.comparisons[0].operator, int_value(test.comparisons[0].comparator)
        if _non_number_text(test.comparisons[0].comparator) and self.is_rank(test.left, scope):
            # `rank == "cpu"`: a rank that is a device name, set only on the single-process path;
            # in a distributed run every rank is a number
            if isinstance(operator, (cst.Equal, cst.Is)):
                return False
            if isinstance(operator, (cst.NotEqual, cst.IsNot)):
                return True
        if bound == -1 and self.is_rank(test.left, scope):  # its own depth: a different question
            if isinstance(operator, (cst.NotEqual, cst.IsNot, cst.GreaterThan, cst.GreaterThanEqual)):
                return True
            if isinstance(operator, (cst.Equal, cst.Is)):
                return False
        if "world" in identifier_words(_compared_name(test.left)):
            more_than_one = {(cst.GreaterThan, 1), (cst.GreaterThanEqual, 2), (cst.NotEqual, 1)}
            just_one = {(cst.Equal, 1), (cst.LessThanEqual, 1), (cst.LessThan, 2)}
            if (type(operator), bound) in more_than_one:
                return True
            if (type(operator), bound) in just_one:
                return False
        return None

    def runs_single_process(self, context: "Context") -> bool:
        """Inside the non-distributed arm of `if distributed: ... else: ...`. Not an arm that
        starts the process group itself (`if not dist.is_initialized(): init_process_group()`):
        its test reads as the single-process run, but every rank runs it, before its group exists."""
        starting = self._group_starting_arms
        for branch, in_body in context.branches:
            if (id(branch), in_body) in starting:
                continue
            polarity = self.distributed_polarity(branch.test, context.scope)
            if polarity is not None and polarity != in_body:
                return True
        return False

    def single_rank_arm(self, branch: "BranchSite") -> Optional[bool]:
        """Which arm of a branch runs on one rank only: True for the body (`if rank == 0:`),
        False for the `else:` of `if rank != 0:`, None if neither."""
        scope, node = branch.context.scope, branch.node
        if self.is_single_rank_guard(node.test, scope):
            return True
        if isinstance(node, cst.If) and isinstance(node.orelse, cst.Else) and self.is_other_ranks_guard(node.test, scope):
            return False
        return None

    def call_runs_on_one_rank_only(self, site: "CallSite", depth: int = 0) -> bool:
        """A call only one rank makes: inside a single-rank guard (an `if` around it, the rank-0
        arm of a conditional expression `[torch.load(p) if rank == 0 else None]`), after an early
        exit of the other ranks (`if not is_main_process(): return`), or in a function of the
        file that is only ever called that way (a rank-0 evaluation helper)."""
        if self.runs_on_one_rank_only(site.context) or id(site.node) in self._calls_in_single_rank_ifexp:
            return True
        if self.after_other_ranks_left(site.context):
            return True
        return depth < 3 and self._function_called_on_one_rank(site.context.scope, depth)

    def after_other_ranks_left(self, context: "Context") -> bool:
        """An earlier statement of the same function sends every other rank away:
        `if rank != 0: return` / `if not accelerator.is_main_process: return`."""
        return any(self._first_exit_of_others(body, index, context.scope) < index for body, index in context.path)

    def _first_exit_of_others(self, body, index: int, scope: "Scope") -> float:
        """The index of the first such statement among `body[:index]`, inf if none. Every call of
        the file asks this of its enclosing blocks: what is known of a block is kept (with the
        block, so its id stays its own) and only the statements not yet looked at are judged."""
        key = (id(body), id(scope))
        known = self._exits_of_others.get(key)
        if known is None:
            known = self._exits_of_others[key] = [body, 0, math.inf]
        _, looked_at, found = known
        while found == math.inf and looked_at < index:
            statement = body[looked_at]
            if isinstance(statement, cst.If) and statement.orelse is None and self._leaves(statement.body):
                if self.is_other_ranks_guard(statement.test, scope):
                    found = looked_at
            looked_at += 1
        known[1], known[2] = looked_at, found
        return found

    def _leaves(self, block: cst.BaseSuite) -> bool:
        """The block ends by leaving the function (`return`, `raise`) or the process (`sys.exit(0)`,
        `os._exit(0)`, `exit()`): either way the ranks that take it make no later collective."""
        if ends_with(block, FUNCTION_EXITS):
            return True
        body = block.body if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else []
        last = body[-1] if body else None
        small = last.body if isinstance(last, cst.SimpleStatementLine) else []
        return any(
            isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call) and self._exits_process(statement.value)
            for statement in small[-1:]
        )

    def _exits_process(self, call: cst.Call) -> bool:
        qualified = self.facts.qualified_names(call.func)
        if not qualified.isdisjoint(_PROCESS_EXITS):
            return True
        # the built-in `exit()` / `quit()`, unless the file binds the name to something of its own
        func = call.func
        return not qualified and isinstance(func, cst.Name) and func.value in _BUILTIN_EXITS and func.value not in self.facts.imports.local_names

    def _function_called_on_one_rank(self, scope: "Scope", depth: int) -> bool:
        function = self.facts.function_of(scope)
        if function is None:
            return False
        if self.decorated_to_run_on_one_rank(function):
            return True
        callers = self.facts.call_sites_of(function)
        if callers and all(self.call_runs_on_one_rank_only(c, depth + 1) for c, _ in callers):
            return True
        return function.class_name is not None and self._class_built_on_one_rank(function.class_name, depth)

    def decorated_to_run_on_one_rank(self, function: "FunctionInfo") -> bool:
        """A decorator runs the function's body in one process only, whoever calls it: Lightning's
        `@rank_zero_only`, mmcv's `@master_only`, `@accelerator.on_main_process`, or a decorator
        of this file whose wrapper calls the function only under a single-rank guard (`def
        master_only(fn): def wrapper(*a): if dist.get_rank() == 0: return fn(*a)`)."""
        for decorator in function.node.decorators:
            target = decorator.decorator
            qualified = self.facts.qualified_names(target)
            if qualified & RANK_ZERO_ONLY_DECORATORS:
                return True
            if isinstance(target, cst.Attribute) and target.attr.value in ACCELERATOR_ONE_PROCESS_DECORATORS:
                owner = dotted_name(target.value) or ""
                if any(q.startswith("accelerate.") for q in qualified) or "accelerator" in identifier_words(owner):
                    return True
            if isinstance(target, cst.Name) and target.value in self._one_rank_decorators:
                return True
        return False

    @cached_property
    def _one_rank_decorators(self) -> frozenset[str]:
        """Names of the file's module-level decorators whose inner wrapper calls the decorated
        function (their first parameter) only in a single-rank arm or past the others' exit."""
        facts = self.facts
        found = set()
        for decorator in facts.functions:
            if decorator.scope.parent is not facts.module_scope or decorator.class_name is not None or not decorator.params:
                continue
            wrapped = decorator.params[0]
            calls = [
                site
                for inner in facts.functions
                if inner.scope.parent is decorator.scope
                for site in facts.calls_by_function.get(id(inner), [])
                if isinstance(site.node.func, cst.Name) and site.node.func.value == wrapped
            ]
            if calls and all(self.runs_on_one_rank_only(site.context) or self.after_other_ranks_left(site.context) for site in calls):
                found.add(decorator.name)
        return frozenset(found)

    def _class_built_on_one_rank(self, name: str, depth: int) -> bool:
        """Every object of the class is built by one rank (`if rank == 0: agent = Agent()`): its
        methods run in that process only, also when other ranks reach them through RPC on the
        object's reference. A class of the file that another class derives from, or that is built
        nowhere in the file, may have objects elsewhere: no conclusion."""
        facts = self.facts
        if any(name in (dotted_name(base) for base in info.bases) for info in facts.classes.values()):
            return False
        builds = [
            site for site in facts.calls if isinstance(site.node.func, cst.Name) and site.node.func.value == name
        ]
        return bool(builds) and all(self.call_runs_on_one_rank_only(site, depth + 1) for site in builds)

    @cached_property
    def _group_starting_arms(self) -> frozenset:
        """(id(branch), arm) of each arm around a call that starts the process group in this
        process (not a spawn of workers)."""
        starts = self.facts.calls_named(*(PROCESS_GROUP_STARTERS - SPAWNERS))
        return frozenset((id(branch), arm) for site in starts for branch, arm in site.context.branches)

    @cached_property
    def _calls_in_single_rank_ifexp(self) -> frozenset:
        inside: set[int] = set()
        for branch in self.facts.branches:
            if isinstance(branch.node, cst.IfExp):
                arm = self.single_rank_arm(branch)
                if arm is not None:
                    inside.update(id(site.node) for site in self.facts.calls_in_arm(branch, arm))
        return frozenset(inside)

    def runs_on_one_rank_only(self, context: "Context") -> bool:
        """Whether a place sits inside the body of a single-rank guard."""
        return any(in_body and self.is_single_rank_guard(branch.test, context.scope) for branch, in_body in context.branches)

    def rank_zero_on_some_steps(self, guard: cst.If, context: "Context") -> bool:
        """The place (in the guard's body) is reached by rank 0 alone whenever a rank-independent
        condition is false: `if is_rank0 and step % k == 0 or last_step:`, `if rank == 0 or
        args.all_ranks:`; and nothing on the way to it requires that condition. Still some ranks,
        on those steps or settings: what matters for a collective."""
        escapes = self._rank_zero_unless(guard.test, context.scope)
        return bool(escapes) and not any(self._required_on_path(escape, context, guard) for escape in escapes)

    def _rank_zero_unless(self, test: cst.BaseExpression, scope: "Scope") -> list[cst.BaseExpression]:
        """For `A or C or ...` where some sides are rank-0 guards and the others do not read the
        rank: those others (the conditions under which every rank passes). Empty for anything
        else. Rank 0 alone passes whenever they are false, so a collective under such a guard is
        still reached by some ranks only on those steps or settings."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            # `not skip and (rank == 0 or C)`: the other parts only narrow who gets there
            parts = and_parts(test)
            for part in parts:
                escapes = self._rank_zero_unless(part, scope)
                if escapes and not any(self._reads_rank(p, scope) for p in parts if p is not part):
                    return escapes
            return []
        if not (isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or)):
            return []
        sides = _or_sides(test)
        guards = [side for side in sides if self.is_rank_zero_guard(side, scope)]
        others = [side for side in sides if not any(side is guard for guard in guards)]
        if not guards or any(self._reads_rank(side, scope) for side in others):
            return []
        return [side for side in others if not self._false_when_distributed(side, scope)]

    def _reads_rank(self, test: cst.BaseExpression, scope: "Scope") -> bool:
        return any(
            isinstance(node, (cst.Name, cst.Attribute, cst.Call)) and self.is_rank(node, scope)
            for node in walk(test)
        )

    @staticmethod
    def _required_on_path(condition: cst.BaseExpression, context: "Context", guard: cst.CSTNode) -> bool:
        """Another `if` around the place holds only when `condition` does: a part of its test (the
        place in its body) or the test's negation (the place in its `else:`) is the condition, or
        pins the same value to another constant (`kind == GLOBAL` requires `kind != LEGACY`).
        `if not legacy or rank == 0:` ... `if not legacy: dcp.save(...)` reaches the save on every
        rank."""
        wanted = normalised(_code(condition))
        for branch, in_body in context.branches:
            if branch is guard:
                continue
            facts = and_parts(branch.test) if in_body else [_negation(branch.test)]
            for fact in facts:
                text = normalised(fact if isinstance(fact, str) else _code(fact))
                if text == wanted or (not isinstance(fact, str) and _pins_other_value(fact, condition)):
                    return True
        return False

    def _compares_rank_to_zero(self, test: cst.Comparison, scope: "Scope", depth: int) -> bool:
        if len(test.comparisons) != 1:
            return False
        operator = test.comparisons[0].operator
        left, right = test.left, test.comparisons[0].comparator
        if isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Modulo):
            left = left.left  # `args.rank % ngpus_per_node == 0`: local rank 0, the first rank of each node
        if isinstance(operator, (cst.Equal, cst.Is)):
            if self._is_zero(right, scope):
                return self.is_rank(left, scope, depth + 1)
            if self._is_zero(left, scope):
                return self.is_rank(right, scope, depth + 1)
            return False
        if isinstance(operator, cst.In) and isinstance(right, (cst.Tuple, cst.List, cst.Set)):
            values = {int_value(element.value) for element in right.elements}
            return 0 in values and values <= {0, -1} and self.is_rank(left, scope, depth + 1)
        if isinstance(operator, cst.LessThanEqual) and int_value(right) == 0:
            return self.is_rank(left, scope, depth + 1)
        if isinstance(operator, cst.LessThan) and int_value(right) == 1:
            return self.is_rank(left, scope, depth + 1)
        return False

    @staticmethod
    def _is_zero(node: cst.BaseExpression, scope: "Scope") -> bool:
        """`0`, or a name only ever assigned 0 (`LEADER = 0`)."""
        if int_value(node) == 0:
            return True
        if isinstance(node, cst.Name):
            bindings = scope.lookup(node.value)
            return bool(bindings) and all(b.kind == "assign" and int_value(b.value) == 0 for b in bindings)
        return False

    def _bound_to(self, node, scope, depth, predicate) -> bool:
        """Whether a name is assigned (in scope) from something the predicate accepts."""
        key = dotted_name(node)
        if key is None:
            return False
        for binding in scope.lookup(key):
            if binding.kind == "assign" and binding.value is not None:
                if predicate(binding.value, binding.scope or scope, depth + 1):
                    return True
        return False

    # -- conditions that differ between ranks ------------------------------------------------------
    def made_under_rank_condition(self, site: "CallSite") -> bool:
        """The call sits under a condition that can differ between the ranks of one run."""
        return self._under_rank_condition(site)

    def _under_rank_condition(self, site: "CallSite") -> bool:
        return any(self._selects_ranks(branch.test, site.context.scope) for branch, _ in site.context.branches)

    def _selects_ranks(self, test: cst.BaseExpression, scope: "Scope") -> bool:
        """The condition can differ between the ranks of one distributed run. A test of whether the
        run is distributed (`local_rank != -1`, `world_size > 1`) reads the rank variables but is
        the same on every rank, so it selects none."""
        if isinstance(test, cst.BooleanOperation):
            return self._selects_ranks(test.left, scope) or self._selects_ranks(test.right, scope)
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self._selects_ranks(test.expression, scope)
        return self.distributed_polarity(test, scope) is None and self.depends_on_rank(test, scope)


def _is_property(node: cst.FunctionDef) -> bool:
    """`@property` / `@functools.cached_property`: read as an attribute, run as a method."""
    return any(last_name(decorator.decorator) in ("property", "cached_property") for decorator in node.decorators)
