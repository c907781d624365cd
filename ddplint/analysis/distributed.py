"""Is this a distributed script, and the rank model the rules ask (`model.ranks`).

Whether a file is distributed is told from what it calls, imports and reads from the environment
(`detect_distributed`), and before any parse from the names its code uses (`may_be_distributed`,
the screen's question). `RankModel` answers the rules' rank questions: rank guards and single-rank
code in analysis/rank_guards.py, collectives and wrapped forwards in analysis/collectives.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, AbstractSet, Callable, Optional

import libcst as cst

from ddplint.analysis.collectives import Collectives
from ddplint.analysis.rank_guards import decided_value, environment_key
from ddplint.analysis.syntax import argument, dotted_name, int_value, keyword_arg, last_name, string_value, walk
from ddplint.analysis.torch_api import (
    DISTRIBUTED_ENTRY_POINTS,
    LAUNCHER_ENV_VARS,
    NOT_DISTRIBUTED_BY_ITSELF,
    OTHER_FRAMEWORKS,
    SINGLE_PROCESS_APIS,
    TEST_CASE_CLASSES,
    TEST_FRAMEWORKS,
)

if TYPE_CHECKING:
    from ddplint.analysis.facts import ModuleFacts


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
    data: bytes, names: AbstractSet[str], distributed_elsewhere: Optional[Callable[[AbstractSet[str]], bool]] = None
) -> bool:
    """Whether `detect_distributed` could find the file distributed, told from the names its
    code uses (`names`: screen.compile_screen's, comments and docstrings left out) before any
    parse. Each way it can is a call, an import or an environment read, each of which writes a
    word: one of DISTRIBUTED_NAMES, a launcher variable, or the name of a project function that
    may start the process group or make a collective (`distributed_elsewhere`, asked last: it
    reads the project; None without a project)."""
    return (
        not names.isdisjoint(DISTRIBUTED_NAMES)
        or any(token in data for token in _LAUNCHER_ENV_TOKENS)
        or (distributed_elsewhere is not None and distributed_elsewhere(names))
    )


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
    dead_scopes = _scopes_never_run(facts)
    dead = frozenset(id(site.node) for site in facts.calls if site.context.scope.within(dead_scopes)) if dead_scopes else frozenset()
    for site in facts.calls:
        names = facts.qualified_names(site.node.func)
        hit = names & DISTRIBUTED_ENTRY_POINTS
        if hit and id(site.node) not in dead:
            return DistributedContext(f"calls {sorted(hit)[0]}")
    either_way = _calls_made_only_if_initialised(facts) if is_script(facts) else frozenset()
    either_way |= _calls_under_rank_tests_that_never_hold(facts) | dead
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
            collective = facts.project.collective(facts, site)
            if collective is not None:  # a module calling only its project's `comm.reduce_dict(...)`
                return DistributedContext(f"calls {site.name}(), which makes {collective.name} in another module")
            extended = facts.project.distributed_class(facts, site.node.func)
            if extended is not None:  # a project's own DistributedSampler / DDP subclass
                return DistributedContext(f"builds {site.name}, a {extended} subclass of another module")
    if facts.imports.imports_any(OTHER_FRAMEWORKS):
        # A JAX / TensorFlow script that copied the `--local_rank` / LOCAL_RANK boilerplate:
        # reading the variable starts no torch process group.
        return DistributedContext()
    for key, node in facts.env_reads:
        if key in LAUNCHER_ENV_VARS and not _never_run(facts, node, dead_scopes):
            return DistributedContext(f"reads {key} from the environment")
    for site in facts.calls:
        read = environment_key(site.node)
        if read in LAUNCHER_ENV_VARS and id(site.node) not in dead:
            return DistributedContext(f"reads {read} from the environment")
    for branch in facts.branches:
        tested = _environ_membership(branch.test)
        if tested in LAUNCHER_ENV_VARS and not branch.context.scope.within(dead_scopes):
            return DistributedContext(f"reads {tested} from the environment")
    return DistributedContext()


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
    """A file run as a program: a notebook, or a file with an `if __name__ == "__main__":` block."""
    return facts.notebook or any(
        isinstance(statement, cst.If) and "__main__" in facts.module.code_for_node(statement.test)
        for statement in facts.module.body
    )


def _scopes_never_run(facts: "ModuleFacts") -> set[int]:
    """In a script, id() of the top-level functions nothing in it runs (a `reduce_mean()` helper
    left over from a distributed version, a set-up whose call is commented out, what only those
    call: ModuleFacts.functions_never_run): what they do is no evidence of how the script runs.
    A library module's functions are called by its importers, so only a script's count."""
    if not is_script(facts):
        return set()
    never = facts.functions_never_run
    return {id(function.scope) for function in facts.functions if id(function) in never}


def _never_run(facts: "ModuleFacts", node: cst.CSTNode, dead: set[int]) -> bool:
    context = facts.context_of_value(node) if dead else None
    return context is not None and context.scope.within(dead)


def _calls_made_only_if_initialised(facts: "ModuleFacts") -> frozenset:
    """Calls in the arm of a test on `dist.is_initialized()` / `is_available()` that runs when a
    process group exists (`rank = dist.get_rank() if dist.is_initialized() else 0`), or after
    such a test in an `and` of a test."""
    inside: set[int] = set()
    for branch in facts.branches:
        polarity = _initialised_test(facts, branch.node.test)
        if polarity is not None:
            inside.update(id(site.node) for site in facts.calls_in_arm(branch, polarity))
        # `if dist.is_initialized() and dist.get_rank() != 0:`: the right operand needs a group
        for node in walk(branch.node.test):
            if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And) and _initialised_test(facts, node.left):
                inside.update(id(call) for call in walk(node.right) if isinstance(call, cst.Call))
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
    return decided_value(test, lambda part: _rank_comparison_value(part, rank))


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
        if any(name.startswith("torch.distributed.") and name.split(".")[-1] in NOT_DISTRIBUTED_BY_ITSELF for name in names):
            return True
    return None


def _single_process_api(qualified: str) -> bool:
    """torch.distributed calls that work in one process and do not mean several: availability
    checks, and distributed checkpoints (`dcp.load` in a conversion script)."""
    return qualified.split(".")[-1] in NOT_DISTRIBUTED_BY_ITSELF or qualified.startswith(SINGLE_PROCESS_APIS)


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


class RankModel(Collectives):
    """`model.ranks`: "is this expression a rank?", "is this condition true only on rank 0?" (the
    rank guards, RankGuards) and "does this call reach a collective?" (Collectives), one object
    per file so that what each part caches is shared."""
