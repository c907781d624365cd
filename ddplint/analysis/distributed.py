"""Is this a distributed script, what is a rank, and what is a rank-0 guard.

Rank guards are written a dozen ways in real code (`rank == 0`, `not rank`, `local_rank in (-1,
0)`, `is_main_process()`, `accelerator.is_main_process`, `trainer.is_global_zero`, `master_process
= ddp_rank == 0`, `args.rank % ngpus_per_node == 0`); this module is the one place that knows them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, AbstractSet, Callable, Optional

import libcst as cst

from ddplint.analysis.options import declared
from ddplint.analysis.records import CollectiveReach
from ddplint.analysis.syntax import (
    FUNCTION_EXITS,
    alternatives,
    and_parts,
    argument,
    dotted_name,
    ends_with,
    identifier_words,
    int_value,
    is_true,
    keyword_arg,
    last_name,
    receiver,
    string_value,
    value_walk,
    walk,
)
from ddplint.analysis.torch_api import (
    ACCELERATOR,
    ACCELERATOR_COLLECTIVES,
    BARRIER_COLLECTIVES,
    BROADCAST_COLLECTIVES,
    CHECKPOINT_COLLECTIVES,
    COLLECTIVES,
    DISTRIBUTED_ENTRY_POINTS,
    FRAMEWORK_COLLECTIVES,
    LIGHTNING_MODULE,
    LIGHTNING_MODULE_COLLECTIVES,
    LIGHTNING_PACKAGES,
    LIGHTNING_SYNCED_LOGGING,
    OTHER_FRAMEWORKS,
    SINGLE_PROCESS_APIS,
    SUBGROUP_RANK_FUNCTIONS,
    SYNCHRONISING_METHODS,
    TEST_CASE_CLASSES,
    TEST_FRAMEWORKS,
    WRAPPED_MODEL_CLASSES,
)

if TYPE_CHECKING:
    from ddplint.analysis.facts import ModuleFacts
    from ddplint.analysis.records import BranchSite, CallSite, Context, Scope

# Reading one of these from the environment means the script expects a launcher (torchrun).
LAUNCHER_ENV_VARS = frozenset({"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"})
RANK_ENV_VARS = frozenset({"RANK", "LOCAL_RANK", "SLURM_PROCID", "SLURM_LOCALID", "GROUP_RANK"})

# A distributed script contains at least one of these byte strings: the engine skips the
# distributed-only rules in files without any (tests keep this in step with the checks below).
DISTRIBUTED_TOKENS = (
    b"distributed", b"Distributed", b"init_process_group", b"RANK", b"WORLD_SIZE", b"spawn", b"start_processes",
    b"fully_shard", b"FullyShardedDataParallel", b"init_device_mesh", b"horovod",
    # `accelerate launch` starts the processes: an Accelerate script needs no torch.distributed.
    b"accelerate",
    # Lightning's Trainer / Fabric start them too (DDP007: `trainer.save_checkpoint` on one rank).
    b"lightning",
    # `deepspeed.initialize(...)` starts the process group unless one exists.
    b"deepspeed",
)


def _written_word(qualified: str) -> str:
    """A word every use of `qualified` writes in the code: its module, or for torch's own names
    (every torch file names `torch`) the name itself: a call or an import spells the last part
    (`mp.spawn(...)`, `from torch.nn.parallel import DistributedDataParallel as DDP`)."""
    parts = qualified.split(".")
    return parts[0] if parts[0] != "torch" else parts[-1]


# Names the code of a file must use for a distributed-only rule to say anything: a call of
# `torch.distributed.*` names `distributed`; an entry point, its word; the frameworks that make
# DDP007 / DDP010 judge a file without torch.distributed, their package.
DISTRIBUTED_NAMES = frozenset(
    {"distributed", *map(_written_word, DISTRIBUTED_ENTRY_POINTS), "accelerate", "lightning", "pytorch_lightning", "lightning_fabric"}
)
# Every launcher variable's name holds one of these: an environment read spells it.
_LAUNCHER_ENV_TOKENS = (b"RANK", b"WORLD_SIZE")


def may_be_distributed(
    data: bytes, names: AbstractSet[str], started_elsewhere: Optional[Callable[[AbstractSet[str]], bool]] = None
) -> bool:
    """Whether `detect_distributed` could find the file distributed, told from the names its
    code uses (`names`: screen.compile_screen's, comments and docstrings left out) before any
    parse. Each way it can is a call, an import or an environment read, each of which writes a
    word: one of DISTRIBUTED_NAMES, a launcher variable, or the name of a project function that
    may start the process group (`started_elsewhere`, asked last: it reads the project; None
    without a project)."""
    return (
        not names.isdisjoint(DISTRIBUTED_NAMES)
        or any(token in data for token in _LAUNCHER_ENV_TOKENS)
        or (started_elsewhere is not None and started_elsewhere(names))
    )


# torch.distributed calls that do not by themselves mean the code runs on several processes.
_NOT_DISTRIBUTED_BY_ITSELF = frozenset({"is_available", "is_initialized", "is_nccl_available", "is_gloo_available"})

RANK_FUNCTIONS = frozenset(
    {"get_rank", "get_local_rank", "get_global_rank", "get_node_local_rank", "get_ordinal", "get_process_index"}
)
_RANK_GETTER = re.compile(r"^get_(?:\w+_)?rank$")
_RANK_WORD = re.compile(r"(?:^|_)rank(?:_|$)|(?:^|_)process_index$|(?:^|_)ordinal$")
# "rank" in these names is linear algebra, not a process: `lora_rank`, `low_rank`, `matrix_rank`.
# "per ... rank" is an amount each rank has: `num_tokens_per_dp_rank`, `batch_size_per_rank`.
_NOT_PROCESS_RANK = re.compile(r"lora|low_?rank|matrix|tensor_rank|svd|adapter|ranking|rank_?r$|per_(?:\w+_)?rank$")

# Names (of functions, properties or flags) that mean "this process is rank 0".
RANK_ZERO_NAMES = frozenset(
    {
        "is_main_process",
        "is_local_main_process",
        "main_process",
        "is_main",
        "is_master",
        "master",
        "is_master_process",
        "master_process",
        "is_master_ordinal",
        "is_rank_zero",
        "is_rank_0",
        "rank_zero",
        "is_global_zero",
        "is_local_zero",
        "is_world_process_zero",
        "is_local_process_zero",
        "is_primary",
        "is_chief",
    }
)


def _rank_guard_words() -> tuple[bytes, ...]:
    """Lower-case words of which a single-rank guard (`RankModel.single_rank_arm`) or an early
    exit of the other ranks (`after_other_ranks_left`) holds one in its own text: every such
    test ends, through names, calls, comparisons and `and` / `or` / `not` (and the values of
    names assigned in the file), in `RankModel.is_rank` (a name with `_RANK_WORD`, a
    `RANK_FUNCTIONS` or `get_*_rank` call, horovod's or a group's `rank()`, one of
    `RANK_ENV_VARS` read from the environment) or in a name of `RANK_ZERO_NAMES`. Matched in
    any case (names are lower-cased before they are compared). A file without any of them has
    no rank guard: the screen needs no parse to know it (DDP007, DDP010). Only a name or key
    spelled with escapes (`"R\\x41NK"`) would escape this."""
    words = {"rank", "process_index", "ordinal"} | set(RANK_FUNCTIONS) | RANK_ZERO_NAMES | {v.lower() for v in RANK_ENV_VARS}
    return tuple(sorted(w.encode() for w in words if not any(o != w and o in w for o in words)))


RANK_GUARD_WORDS = _rank_guard_words()


# Values that differ between processes started at the same moment on one or several machines.
PER_PROCESS_VALUES = frozenset(
    {
        "time.time", "time.time_ns", "time.perf_counter", "time.perf_counter_ns", "time.monotonic",
        "time.monotonic_ns", "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
        "os.getpid", "os.urandom", "uuid.uuid4", "uuid.uuid1", "torch.initial_seed", "torch.seed",
        "numpy.random.randint", "random.randint", "random.random", "random.getrandbits", "random.randrange",
    }
)
PER_PROCESS_PREFIXES = ("secrets.",)

_MAX_DEPTH = 4  # how far a value is followed through assignments


@dataclass(frozen=True)
class DistributedContext:
    """Why a file counts as distributed (empty evidence: it does not)."""

    evidence: str = ""

    def __bool__(self) -> bool:
        return bool(self.evidence)


def detect_distributed(facts: "ModuleFacts") -> DistributedContext:
    if any(_single_process_group(site.node) for site in facts.calls_named("torch.distributed.init_process_group")):
        return DistributedContext()  # a process group of one, e.g. for torch.distributed.checkpoint
    if is_test_code(facts):
        return DistributedContext()
    for site in facts.calls:
        names = facts.qualified_names(site.node.func)
        hit = names & DISTRIBUTED_ENTRY_POINTS
        if hit:
            return DistributedContext(f"calls {sorted(hit)[0]}")
    either_way = _calls_made_only_if_initialised(facts) if is_script(facts) else frozenset()
    either_way |= _calls_under_rank_tests_that_never_hold(facts)
    for site in facts.calls:
        # A helper module that only calls dist.get_rank() / broadcast_object_list(...) runs
        # inside a distributed job even though it never initialises one. A script's calls made
        # only `if dist.is_initialized()` run in one process as well: they are no evidence.
        if id(site.node) in either_way:
            continue
        for name in facts.qualified_names(site.node.func):
            if name.startswith("torch.distributed.") and not _single_process_api(name):
                return DistributedContext(f"calls {name}")
    if facts.project is not None:
        for site in facts.calls:
            if facts.project.starts_process_group(facts, site):
                return DistributedContext(f"calls {site.name}(), which starts the process group in another module")
            extended = facts.project.distributed_class(facts, site.node.func)
            if extended is not None:  # a project's own DistributedSampler / DDP subclass
                return DistributedContext(f"builds {site.name}, a {extended} subclass of another module")
    if facts.imports.imports_any(OTHER_FRAMEWORKS):
        # A JAX / TensorFlow script that copied the `--local_rank` / LOCAL_RANK boilerplate:
        # reading the variable starts no torch process group.
        return DistributedContext()
    for key, _ in facts.env_reads:
        if key in LAUNCHER_ENV_VARS:
            return DistributedContext(f"reads {key} from the environment")
    for site in facts.calls:
        read = environment_key(site.node)
        if read in LAUNCHER_ENV_VARS:
            return DistributedContext(f"reads {read} from the environment")
    for branch in facts.branches:
        tested = _environ_membership(branch.test)
        if tested in LAUNCHER_ENV_VARS:
            return DistributedContext(f"reads {tested} from the environment")
    return DistributedContext()


def _mentions_name(value: cst.CSTNode, dotted: Optional[str]) -> bool:
    """`value` reads the name or attribute chain `dotted` (`args.rank * n + gpu` reads `args.rank`)."""
    return dotted is not None and any(
        isinstance(node, (cst.Name, cst.Attribute)) and dotted_name(node) == dotted for node in walk(value)
    )


def _normalised(code: str) -> str:
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
    same_subject = _normalised(_code(fact.left)) == _normalised(_code(condition.left))
    return same_subject and _normalised(_code(pinned.comparator)) != _normalised(_code(excluded.comparator))


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


def _literal_flags(arguments: dict) -> frozenset:
    """Parameters a call passes a literal True / False for, as ("flag:name", value)."""
    out = set()
    for name, value in arguments.items():
        if isinstance(value, cst.Name) and value.value in ("True", "False"):
            out.add((f"flag:{name}", value.value == "True"))
    return frozenset(out)


def _decided(test: cst.BaseExpression, leaf: Callable[[cst.BaseExpression], Optional[bool]]) -> Optional[bool]:
    """The value of a condition built with and / or / not from parts whose value `leaf` knows
    (None: unknown). Decided where Python's short-circuit would decide it: `x and False` is
    False whatever x is."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _decided(test.expression, leaf)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left, right = _decided(test.left, leaf), _decided(test.right, leaf)
        if isinstance(test.operator, cst.And):
            return False if False in (left, right) else (True if left is right is True else None)
        return True if True in (left, right) else (False if left is right is False else None)
    return leaf(test)


def _truth(test: cst.BaseExpression, flags: dict) -> Optional[bool]:
    """The value of a condition built with and / or / not from flags of known value; None when
    it depends on anything else."""
    return _decided(test, lambda part: flags.get(f"flag:{part.value}") if isinstance(part, cst.Name) else None)




def _single_process_group(call: cst.Call) -> bool:
    """`init_process_group(..., world_size=1)`: a group of one, e.g. for distributed checkpoints.
    A literal `rank=0` (or the "fake" backend of compile-only tools) is one process too: the
    processes of a real group cannot all pass the same rank."""
    size = keyword_arg(call, "world_size")
    if size is not None and int_value(size.value) == 1:
        return True
    rank = keyword_arg(call, "rank")
    if rank is not None and int_value(rank.value) is not None:
        return True
    backend = argument(call, "backend", 0)
    return backend is not None and string_value(backend) == "fake"


def is_script(facts: "ModuleFacts") -> bool:
    """A file run as a program: it has an `if __name__ == "__main__":` block."""
    return any(
        isinstance(statement, cst.If) and "__main__" in facts.module.code_for_node(statement.test)
        for statement in facts.module.body
    )


def _calls_made_only_if_initialised(facts: "ModuleFacts") -> frozenset:
    """Calls in the arm of a test on `dist.is_initialized()` / `is_available()` that runs when a
    process group exists (`rank = dist.get_rank() if dist.is_initialized() else 0`)."""
    inside: set[int] = set()
    for branch in facts.branches:
        polarity = _initialised_test(facts, branch.node.test)
        if polarity is not None:
            inside.update(id(site.node) for site in facts.calls_in_arm(branch, polarity))
    return frozenset(inside)


def _calls_under_rank_tests_that_never_hold(facts: "ModuleFacts") -> frozenset:
    """Calls in an arm that cannot run because the file pins its local rank to -1, the
    single-process value (`args = {"local_rank": -1, ...}` in a notebook that copied
    `if args.local_rank not in [-1, 0]: torch.distributed.barrier()` from a launcher script)."""
    decided = [(branch, holds) for branch in facts.branches if (holds := _rank_test_value(branch.node.test, -1)) is not None]
    # Most files test no local rank: the walk of the whole module below is then not needed.
    if not decided or not _local_rank_pinned_to_single_process(facts):
        return frozenset()
    never: set[int] = set()
    for branch, holds in decided:
        never.update(id(site.node) for site in facts.calls_in_arm(branch, not holds))
    return frozenset(never)


def _local_rank_pinned_to_single_process(facts: "ModuleFacts") -> bool:
    """Every value the file gives a `local_rank` (a variable, an attribute, a dict key, a keyword)
    is the literal -1, and nothing can give it another: no `--local_rank` option a launcher
    fills, no LOCAL_RANK read from the environment, no parameter of that name."""
    if any(key == "LOCAL_RANK" for key, _ in facts.env_reads):
        return False
    written: list[Optional[cst.BaseExpression]] = []
    target: Optional[cst.BaseExpression]
    for node in walk(facts.module):
        if isinstance(node, (cst.SimpleString, cst.FormattedStringText)) and "--local-rank" in node.value.replace("_", "-"):
            return False  # parser.add_argument("--local_rank") / "--local-rank"
        if isinstance(node, cst.Param) and node.name.value == _PINNED_NAME:
            return False
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if any(last_name(t) == _PINNED_NAME for t in targets):
                written.append(node.value if not isinstance(node, cst.AugAssign) else None)
        elif isinstance(node, (cst.For, cst.WithItem)):
            target = node.target if isinstance(node, cst.For) else (node.asname.name if node.asname else None)
            if target is not None and any(last_name(n) == _PINNED_NAME for n in walk(target)):
                return False
        elif isinstance(node, cst.DictElement) and string_value(node.key) == _PINNED_NAME:
            written.append(node.value)
        elif isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == _PINNED_NAME:
            written.append(node.value)
    return bool(written) and all(value is not None and int_value(value) == -1 for value in written)


_PINNED_NAME = "local_rank"


def _rank_test_value(test: cst.BaseExpression, rank: int) -> Optional[bool]:
    """The value of `local_rank == 0`, `args.local_rank not in [-1, 0]`, ... for a known rank;
    None for any other test. `and` / `or` / `not` of such tests are decided where they can be
    (`args.local_rank == 0 and mode == "train"` is False)."""
    return _decided(test, lambda part: _rank_comparison_value(part, rank))


def _rank_comparison_value(test: cst.BaseExpression, rank: int) -> Optional[bool]:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    if last_name(test.left) != _PINNED_NAME:
        return None
    part = test.comparisons[0]
    compared = part.comparator
    if isinstance(compared, (cst.List, cst.Tuple, cst.Set)):
        values = [int_value(element.value) for element in compared.elements]
        if None in values:
            return None
        if isinstance(part.operator, cst.In):
            return rank in values
        if isinstance(part.operator, cst.NotIn):
            return rank not in values
        return None
    value = int_value(compared)
    if value is None:
        return None
    compare = {
        cst.Equal: rank == value, cst.NotEqual: rank != value, cst.LessThan: rank < value,
        cst.GreaterThan: rank > value, cst.LessThanEqual: rank <= value, cst.GreaterThanEqual: rank >= value,
    }
    return compare.get(type(part.operator))


def _initialised_test(facts: "ModuleFacts", test: cst.BaseExpression) -> Optional[bool]:
    """True for `dist.is_initialized()` (and `and` of it with anything), False for its negation."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _initialised_test(facts, test.expression)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return True if True in (_initialised_test(facts, test.left), _initialised_test(facts, test.right)) else None
    if isinstance(test, cst.Call):
        names = facts.qualified_names(test.func)
        if any(name.startswith("torch.distributed.") and name.split(".")[-1] in _NOT_DISTRIBUTED_BY_ITSELF for name in names):
            return True
    return None


def _single_process_api(qualified: str) -> bool:
    """torch.distributed calls that work in one process and do not mean several: availability
    checks, and distributed checkpoints (`dcp.load` in a conversion script)."""
    return qualified.split(".")[-1] in _NOT_DISTRIBUTED_BY_ITSELF or qualified.startswith(SINGLE_PROCESS_APIS)


def is_test_code(facts: "ModuleFacts") -> bool:
    """A file a test runner runs: `unittest.TestCase` subclasses, or, in a file that imports
    pytest / unittest / nose, module-level `test_*` (or `testName`) functions or `Test*` classes
    with `test_*` methods.
    Tests start their workers through a test harness and give the ranks the same data, devices and
    files on purpose: not a training script. (A training script's own `def test(model, loader)`
    is not a test: it imports no test framework.)"""
    if facts.subclasses_of(set(TEST_CASE_CLASSES)):
        return True
    imports_framework = facts.imports.imports_any(TEST_FRAMEWORKS)
    for function in facts.functions:
        if not _test_function_name(function.name):
            continue
        if function.class_name is not None and function.class_name.startswith("Test"):
            return True  # pytest collects `Test*` classes without the file importing pytest
        if imports_framework and function.class_name is None and function.scope.parent is facts.module_scope:
            return True
    return False


def _test_function_name(name: str) -> bool:
    """`test_forward`, `testSyncBN`: what pytest and nose collect (`test` then a word break);
    not `testing_loader` nor a script's own `test(...)` pass."""
    return name.startswith("test_") or (len(name) > 4 and name.startswith("test") and name[4].isupper())


def environment_key(call: cst.Call) -> Optional[str]:
    """`os.environ.get("RANK")` / `os.getenv("RANK")` -> "RANK"."""
    name = last_name(call.func)
    owner_node = receiver(call.func)
    owner = dotted_name(owner_node) if owner_node is not None else None
    reads_env = (name == "get" and owner is not None and owner.split(".")[-1] == "environ") or name == "getenv"
    if reads_env and call.args and call.args[0].keyword is None:
        return string_value(call.args[0].value)
    return None


def _environ_membership(test: cst.BaseExpression) -> Optional[str]:
    """`"LOCAL_RANK" in os.environ` -> "LOCAL_RANK"."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        owner = dotted_name(target.comparator)
        if isinstance(target.operator, cst.In) and owner and owner.split(".")[-1] == "environ":
            return string_value(test.left)
    if isinstance(test, cst.BooleanOperation):
        return _environ_membership(test.left) or _environ_membership(test.right)
    return None


def _environ_subscript_key(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        owner = dotted_name(node.value)
        element = node.slice[0].slice
        if owner and owner.split(".")[-1] == "environ" and isinstance(element, cst.Index):
            return string_value(element.value)
    return None


class RankModel:
    """Answers "is this expression a rank?" and "is this condition true only on rank 0?"."""

    def __init__(self, facts: "ModuleFacts") -> None:
        self.facts = facts
        # (id(block), id(scope)) -> [block, statements looked at, first early exit of the others]
        self._exits_of_others: dict[tuple[int, int], list] = {}

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
            # int(os.environ["LOCAL_RANK"]), str(rank)
            if name in ("int", "str") and node.args:
                return self.is_rank(node.args[0].value, scope, depth + 1)
            return False
        if _environ_subscript_key(node) in RANK_ENV_VARS:
            return True
        if isinstance(node, cst.BinaryOperation):
            # `args.rank % ngpus_per_node`, `node_rank * gpus_per_node + local_rank`
            return self.is_rank(node.left, scope, depth + 1) or self.is_rank(node.right, scope, depth + 1)
        options = alternatives(node)  # `dist.get_rank() if dist.is_initialized() else 0`
        if len(options) > 1:
            return any(self.is_rank(option, scope, depth + 1) for option in options)
        return False

    def one_rank_per_group(self, test: cst.BaseExpression, scope: "Scope") -> bool:
        """The condition compares a rank within a sub-group (`mpu.get_tensor_model_parallel_rank()
        == 0`, `dist.get_rank(group=tp_group) == 0`), itself or through the values its names hold:
        one rank of every model-parallel group passes, not one rank of the whole job."""
        candidates = [test]
        for node in walk(test):
            if isinstance(node, cst.Name):
                candidates += [s.node for s in self.facts.flow.sources(node, scope) if s.node is not None]
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
            return (last_name(test.func) or "").lower() in RANK_ZERO_NAMES or self.is_declared_guard(test)
        if isinstance(test, (cst.Name, cst.Attribute)):
            if (last_name(test) or "").lower() in RANK_ZERO_NAMES:
                return True
            return self._bound_to(test, scope, depth, self.is_rank_zero_guard)
        return False

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
        return _decided(test, lambda part: self.distributed_polarity(part, scope)) is False

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
        left = test.left.func if isinstance(test.left, cst.Call) else test.left
        if "world" in identifier_words(dotted_name(left) or last_name(left) or ""):
            more_than_one = {(cst.GreaterThan, 1), (cst.GreaterThanEqual, 2), (cst.NotEqual, 1)}
            just_one = {(cst.Equal, 1), (cst.LessThanEqual, 1), (cst.LessThan, 2)}
            if (type(operator), bound) in more_than_one:
                return True
            if (type(operator), bound) in just_one:
                return False
        return None

    def runs_single_process(self, context: "Context") -> bool:
        """Inside the non-distributed arm of `if distributed: ... else: ...`."""
        for branch, in_body in context.branches:
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
            if isinstance(statement, cst.If) and statement.orelse is None and ends_with(statement.body, FUNCTION_EXITS):
                if self.is_other_ranks_guard(statement.test, scope):
                    found = looked_at
            looked_at += 1
        known[1], known[2] = looked_at, found
        return found

    def _function_called_on_one_rank(self, scope: "Scope", depth: int) -> bool:
        function = self.facts.function_of(scope)
        if function is None:
            return False
        callers = self.facts.call_sites_of(function)
        if callers and all(self.call_runs_on_one_rank_only(c, depth + 1) for c, _ in callers):
            return True
        return function.class_name is not None and self._class_built_on_one_rank(function.class_name, depth)

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

    def rank_zero_on_some_steps(self, branch: "BranchSite", context: "Context") -> bool:
        """The place (in the branch's body) is reached by rank 0 alone whenever a rank-independent
        condition is false: `if is_rank0 and step % k == 0 or last_step:`, `if rank == 0 or
        args.all_ranks:`; and nothing on the way to it requires that condition. Still some ranks,
        on those steps or settings: what matters for a collective."""
        escapes = self._rank_zero_unless(branch.test, context.scope)
        return bool(escapes) and not any(self._required_on_path(escape, context, branch.node) for escape in escapes)

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
        wanted = _normalised(_code(condition))
        for branch, in_body in context.branches:
            if branch is guard:
                continue
            facts = and_parts(branch.test) if in_body else [_negation(branch.test)]
            for fact in facts:
                text = _normalised(fact if isinstance(fact, str) else _code(fact))
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

    # -- collectives ----------------------------------------------------------------------------
    def collective_kind(self, site: "CallSite") -> Optional[str]:
        """"broadcast" / "barrier" for a call that makes the other ranks wait, else None."""
        name = site.name
        if name not in BROADCAST_COLLECTIVES and name not in BARRIER_COLLECTIVES:
            return None
        qualified = self.facts.qualified_names(site.node.func)
        if qualified and not any(q.startswith(("torch.distributed", "accelerate", "deepspeed")) for q in qualified):
            return None  # numpy.broadcast and friends
        return "broadcast" if name in BROADCAST_COLLECTIVES else "barrier"

    def collective_name(self, site: "CallSite") -> Optional[str]:
        """The name of the collective a call is (`all_reduce`, `barrier`, `wait_for_everyone`,
        `gather` of an Accelerator ...), or None. Every rank of the group must make it."""
        name = site.name
        if name in COLLECTIVES:
            qualified = self.facts.qualified_names(site.node.func)
            if any(q.startswith("torch.distributed.") for q in qualified):
                return name
        if name in ACCELERATOR_COLLECTIVES and self._made_on_an_accelerator(site):
            return name
        if self._synchronising_method(site):
            return name
        if not self.facts.qualified_names(site.node.func).isdisjoint(CHECKPOINT_COLLECTIVES):
            no_dist = keyword_arg(site.node, "no_dist")
            if no_dist is None or not is_true(no_dist.value):
                return f"checkpoint.{name}"
        if self._lightning_module_collective(site):
            return name if name in LIGHTNING_MODULE_COLLECTIVES else f"{name}(..., sync_dist=True)"
        owners = FRAMEWORK_COLLECTIVES.get(name or "")
        if owners and self.facts.imports.imports_any(LIGHTNING_PACKAGES):
            owner = receiver(site.node.func)
            words = set(identifier_words(dotted_name(owner) or "")) if owner is not None else set()
            if words & owners:  # `trainer.save_checkpoint(path)`, `self.trainer.save_checkpoint`
                return name
        return None

    def _synchronising_method(self, site: "CallSite") -> bool:
        """`engine.save_checkpoint(dir)` on what `deepspeed.initialize(...)` returned,
        `model.state_dict()` on an FSDP module: the receiver is followed to what built it."""
        builders = frozenset(builder for builder, methods in SYNCHRONISING_METHODS.items() if site.name in methods)
        return bool(builders) and self._receiver_built_by(site, builders)

    def _receiver_built_by(self, site: "CallSite", builders: frozenset) -> bool:
        """The object a method is called on comes from a call of one of `builders` (qualified
        names), followed through the file's assignments."""
        owner = receiver(site.node.func)
        return owner is not None and any(
            isinstance(source.node, cst.Call) and not self.facts.qualified_names(source.node.func).isdisjoint(builders)
            for source in self.facts.flow.sources(owner, site.context.scope, site.context.branches)
        )

    def _lightning_module_collective(self, site: "CallSite") -> bool:
        """`self.all_gather(x)`, `self.log(..., sync_dist=True)` in a LightningModule of this file."""
        func = site.node.func
        if not isinstance(func, cst.Attribute) or dotted_name(func.value) != "self":
            return False
        if site.name not in LIGHTNING_MODULE_COLLECTIVES:
            sync = keyword_arg(site.node, "sync_dist")
            if site.name not in LIGHTNING_SYNCED_LOGGING or sync is None or not is_true(sync.value):
                return False
        owner = site.context.scope.class_scope
        return owner is not None and owner.name in self._lightning_modules

    @cached_property
    def _lightning_modules(self) -> set[str]:
        return self.facts.subclasses_of(LIGHTNING_MODULE)

    def _made_on_an_accelerator(self, site: "CallSite") -> bool:
        """`accelerator.gather(x)`, `acc.gather(x)` with `acc = Accelerator()`: the receiver holds
        an Accelerator, or is named for one where its value cannot be followed
        (`self.accelerator` set in another class)."""
        if any(q.startswith("accelerate.") for q in self.facts.qualified_names(site.node.func)):
            return True
        owner = receiver(site.node.func)
        if owner is not None and "accelerator" in identifier_words(dotted_name(owner) or ""):
            return True
        return self._receiver_built_by(site, ACCELERATOR)

    def collective_reached(self, site: "CallSite", on_one_rank: bool = False) -> Optional[CollectiveReach]:
        """A collective the call makes, itself or inside a function of this file it calls
        (`evaluate(model)` whose body all-reduces), or of another project module.

        Inside the callees, a collective under a condition the call site has already decided the
        other way (`if pipe: self._update() else: ... self._update()` where `_update` all-reduces
        only `if pipe:`) is not reached. `on_one_rank`: the call is made by one rank only, so a
        collective the callee makes under its own single-rank guard (`if rank == 0: barrier()`)
        is reached too, by that rank alone."""
        direct = self.collective_name(site)
        if direct is not None:
            return CollectiveReach(direct, subgroup=keyword_arg(site.node, "group") is not None)
        decided = None
        for function, bound in self.facts.functions_called_by(site):
            if function not in (self._any_collective_functions if on_one_rank else self._collective_functions):
                continue
            decided = self._decided_conditions(site) if decided is None else decided
            flags = _literal_flags(function.param_for(site.node, bound))
            inner = self._first_collective_in(function, set(), decided | flags, on_one_rank)
            if inner is not None:
                return inner.through(function.name)
        if self.facts.project is not None:  # a helper of another project module (`reduce_mean`)
            return self.facts.project.collective(self.facts, site)
        return None

    def collective_inside(self, function) -> Optional[CollectiveReach]:
        """The first collective a function of this file makes on every call (not under a rank
        condition of its own), directly or through the file's other functions."""
        if function not in self._collective_functions:
            return None
        return self._first_collective_in(function, set(), frozenset(), False)

    def _first_collective_in(self, function, seen: set, decided: frozenset, on_one_rank: bool) -> Optional[CollectiveReach]:
        if id(function) in seen:
            return None
        seen.add(id(function))
        for call in self.facts.calls_by_function.get(id(function), []):
            if self._excluded_by(call, decided):
                continue
            name = self.collective_name(call)
            if name is not None and (not self._under_rank_condition(call) or on_one_rank and self._single_rank_only(call)):
                return CollectiveReach(name, subgroup=keyword_arg(call.node, "group") is not None)
            for callee, bound in self.facts.functions_called_by(call):
                conditions = frozenset(c for c in decided if not c[0].startswith("flag:"))
                conditions |= _literal_flags(callee.param_for(call.node, bound))
                inner = self._first_collective_in(callee, seen, conditions, on_one_rank)
                if inner is not None:
                    return inner
        return None

    def _decided_conditions(self, site: "CallSite") -> frozenset:
        """The conditions around a call, as (source text, arm taken)."""
        code = self.facts.module.code_for_node
        return frozenset((_normalised(code(branch.test)), arm) for branch, arm in site.context.branches)

    def _excluded_by(self, call: "CallSite", decided: frozenset) -> bool:
        """The call sits in an arm the caller's conditions rule out: the same condition decided
        the other way, or a test that the literal flags passed in make take the other arm
        (`if rank == 0 and not evaluate:` in a helper called with `evaluate=True`)."""
        if not decided:
            return False
        code = self.facts.module.code_for_node
        flags = {name: value for name, value in decided if name.startswith("flag:")}
        for branch, arm in call.context.branches:
            if (_normalised(code(branch.test)), not arm) in decided:
                return True
            if flags and _truth(branch.test, flags) is (not arm):
                return True
        return False

    def _single_rank_only(self, call: "CallSite") -> bool:
        """Under a rank condition that is a single-rank guard (`if rank == 0:`), in its rank arm."""
        return self.runs_on_one_rank_only(call.context)

    @cached_property
    def _any_collective_functions(self) -> set:
        return self.facts.functions_reaching(lambda site: self.collective_name(site) is not None)

    @cached_property
    def _collective_functions(self) -> set:
        # A collective the callee itself guards by rank (`if local_rank not in (-1, 0):
        # barrier()`) is already coordinated there; it does not make the call a collective.
        return self.facts.functions_reaching(
            lambda site: self.collective_name(site) is not None and not self._under_rank_condition(site)
        )

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

    # -- the DDP-wrapped model ------------------------------------------------------------------
    def is_wrapped_model_forward(self, site: "CallSite") -> bool:
        """`model(x)` where `model` holds a `DistributedDataParallel(...)` / FSDP module: its
        forward synchronises buffers (and FSDP gathers parameters) with the other ranks.
        `model.module(x)` is the plain module and does not."""
        func = site.node.func
        if not isinstance(func, (cst.Name, cst.Attribute)) or not self._syncing_wrappers:
            return False
        flow = self.facts.flow
        for source in flow.sources(func, site.context.scope, site.context.branches):
            if isinstance(source.node, cst.Call) and id(source.node) in self._syncing_wrappers:
                return True
        return False

    @cached_property
    def _syncing_wrappers(self) -> frozenset:
        """The `DistributedDataParallel(...)` / FSDP constructions whose forward talks to the other
        ranks. FSDP always all-gathers parameters. DDP broadcasts buffers, so it counts only when
        the model may have some (the file mentions BatchNorm, `register_buffer`, or builds
        torchvision / timm models) and `broadcast_buffers=False` is not passed: a buffer-less
        model (a GPT with flash attention) runs a rank-0 forward without any collective."""
        out = set()
        for site in self.facts.calls_named(*WRAPPED_MODEL_CLASSES):
            names = self.facts.qualified_names(site.node.func)
            if names & _ALWAYS_SYNCING:
                out.add(id(site.node))
                continue
            broadcast = next((a for a in site.node.args if a.keyword and a.keyword.value == "broadcast_buffers"), None)
            if broadcast is not None and isinstance(broadcast.value, cst.Name) and broadcast.value.value == "False":
                continue
            if self._model_may_have_buffers:
                out.add(id(site.node))
        return frozenset(out)

    @cached_property
    def _model_may_have_buffers(self) -> bool:
        text = self.facts.source
        if any(word in text for word in BUFFER_EVIDENCE):
            return True
        return self.facts.imports.imports_any(("torchvision.models", "timm"))

    def wrapped_forward_reached(self, site: "CallSite") -> bool:
        """A forward through the wrapped model, made by the call or inside a file function it calls."""
        if self.is_wrapped_model_forward(site):
            return True
        return any(f in self._forward_functions for f, _ in self.facts.functions_called_by(site))

    @cached_property
    def _forward_functions(self):
        if not self._syncing_wrappers:
            return set()
        return self.facts.reaching_test(self.is_wrapped_model_forward)  # asked about a few callees


# Text that says a model holds buffers DDP broadcasts in its forward.
BUFFER_EVIDENCE = ("BatchNorm", "register_buffer", "running_mean", "resnet", "ResNet")
_ALWAYS_SYNCING = {"torch.distributed.fsdp.FullyShardedDataParallel", "torch.distributed.fsdp.fully_shard",
                   "torch.distributed._composable.fsdp.fully_shard"}
