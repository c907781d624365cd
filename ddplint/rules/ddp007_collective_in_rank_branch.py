"""DDP007 collective-in-rank-branch."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from ddplint.analysis.collectives import rank_zero_flag_arm
from ddplint.analysis.divergence import (
    calls_into_shared_helpers,
    divergent_condition,
    exits_in_arm,
    keys_assigned_on_one_rank,
    keys_holding_clock_times,
    leaving_ifs,
    may_diverge,
    other_ranks_leave_at,
)
from ddplint.analysis.facts import BranchSite, CallSite
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.rank_guards import RANK_GUARD_WORDS
from ddplint.analysis.torch_api import (
    ACCELERATOR_COLLECTIVES,
    COLLECTIVES,
    LIGHTNING_MODULE_COLLECTIVES,
    PROCESS_LAUNCHING_PACKAGES,
)
from ddplint.rules.base import Finding, Rule


def check(model: ModuleModel) -> Iterator[Finding]:
    # Accelerate scripts are multi-process whenever `accelerate launch` starts them, without a
    # line of torch.distributed in the file.
    facts = model.facts
    if not model.distributed and not facts.imports.imports_any(PROCESS_LAUNCHING_PACKAGES):
        return
    ranks = model.ranks
    reported: set[int] = set()
    unguarded: list[BranchSite] = []
    for branch in facts.branches:
        arm = ranks.single_rank_arm(branch)
        if arm is None:
            arm = rank_zero_flag_arm(model, branch)  # `if verbose:`, every caller passing `rank == 0`
        if arm is not None:
            yield from _exits(model, branch, arm, reported)
        else:
            unguarded.append(branch)
        # `if is_rank0 and step % k == 0 or last_step:` holds on rank 0 alone on most steps
        sometimes = arm is None and isinstance(branch.node, cst.If)
        if sometimes:
            arm = True
        if arm is None:
            continue
        guard = branch.node if isinstance(branch.node, cst.If) else None  # an `if` statement when `sometimes`
        for site in facts.calls_in_arm(branch, arm):
            if id(site.node) in reported or guard is not None and sometimes and not ranks.rank_zero_on_some_steps(guard, site.context):
                continue
            finding = _unmatched(model, branch, arm, site)
            if finding is not None:
                reported.add(id(site.node))
                yield finding
                yield from _inside_one_rank_functions(model, site, reported)
                yield from _forwards_inside_one_rank_functions(model, site, reported)
    yield from _divergent_branches(model, unguarded, reported)
    yield from _in_one_rank_decorated_functions(model, reported)
    # `if not is_main_process(): return` ... `dist.barrier()`: the others left the function.
    leaving = leaving_ifs(facts)
    for site in facts.calls:
        if id(site.node) in reported or site.context.branches and ranks.runs_on_one_rank_only(site.context):
            continue
        if ranks.after_other_ranks_left(site.context):
            reach = ranks.collective_reached(site, on_one_rank=True)
            if reach is not None and not reach.subgroup:
                reported.add(id(site.node))
                yield RULE.finding(
                    site.node,
                    f"`{reach}` is reached only by the ranks past the others' early exit: the job hangs",
                    why=f"`{reach}` is reached only by the rank that gets past the early exit (`return`, "
                    f"`sys.exit()`) of the other ranks above; they never make this call, so this rank blocks in it "
                    f"until the NCCL timeout and the job hangs; make the collective before the early "
                    f"return, or on every rank",
                )
            continue
        finding = _left_under_a_setting(model, site, reported, leaving)
        if finding is not None:
            yield finding


def _in_one_rank_decorated_functions(model: ModuleModel, reported: set[int]) -> Iterator[Finding]:
    """`@rank_zero_only` / `@master_only` / `@accelerator.on_main_process` (or a decorator of the
    file that calls the function only under a rank-0 guard) on a function that makes a
    collective: every rank calls it, rank 0 alone runs the body."""
    facts, ranks = model.facts, model.ranks
    for site in facts.calls:
        function = facts.function_of(site.context.scope)
        if id(site.node) in reported or function is None or not ranks.decorated_to_run_on_one_rank(function):
            continue
        reach = ranks.collective_reached(site, on_one_rank=True)
        if reach is None or reach.subgroup:
            continue
        reported.add(id(site.node))
        yield RULE.finding(
            site.node,
            f"`{reach}` in `{function.name}`, which its decorator runs on one rank only: the job hangs",
            why=f"the decorator of `{function.name}` runs its body on one rank only (the others "
            f"return at once), so only that rank reaches `{reach}`; the others never make the "
            f"matching call and the job hangs until the NCCL timeout; make the collective before "
            f"the call, on every rank, and keep only the rank-0 work in the decorated function",
        )


def _left_under_a_setting(
    model: ModuleModel, site: CallSite, reported: set[int], candidates: dict[int, list[tuple[int, cst.If]]]
) -> Optional[Finding]:
    """`if rank != 0 and not cfg.sharded: return` (or `if rank != 0: continue` in a loop) before
    a collective: reported at that exit, which decides who goes on."""
    if not any(id(body) in candidates for body, _ in site.context.path):
        return None  # no early exit in any block around the call
    leaving = other_ranks_leave_at(model, site.context, candidates)
    if leaving is None or id(leaving) in reported:
        return None
    reach = model.ranks.collective_reached(site, on_one_rank=True)
    if reach is None or reach.subgroup:
        return None
    reported.add(id(leaving))
    return RULE.finding(
        leaving,
        f"the other ranks leave here, rank 0 goes on alone to `{reach}`: the job hangs",
        why=f"every rank but rank 0 leaves here (under the setting this condition also tests, or "
        f"for this iteration of the loop), while rank 0 goes on to `{reach}` below, a collective "
        f"the others never join; the job hangs until the NCCL timeout; make the collective on "
        f"every rank, before the exit",
    )


def _exits(model: ModuleModel, branch: BranchSite, arm: bool, reported: set[int]) -> Iterator[Finding]:
    """`if rank == 0: ... break`: the rank leaves a loop whose collectives the others go on
    making; `trainer.should_stop = True` on one rank of a Lightning run."""
    for leaving in exits_in_arm(model, branch, arm):
        if id(leaving.node) in reported:
            continue
        reported.add(id(leaving.node))
        if leaving.kind == "stop":
            yield RULE.finding(
                leaving.node,
                "only the ranks that pass this rank condition set `should_stop`: the others hang",
                why="Lightning's trainer leaves `fit()` on the ranks that set `trainer.should_stop`; "
                "the others go on into the next step's collectives (gradient all-reduce, metric "
                "sync) and wait there until the NCCL timeout; decide on every rank and share the "
                "decision (`trainer.strategy.reduce_boolean_decision(stop, all=False)`)",
            )
            continue
        yield RULE.finding(
            leaving.node,
            f"rank-guarded `{leaving.kind}`: the other ranks go on and wait in `{leaving.reach}`",
            why=f"this `{leaving.kind}` is taken only by the ranks that pass the rank condition; the "
            f"other ranks go on to `{leaving.reach}`, which the leaving ranks never join, and the job "
            f"hangs until the NCCL timeout; take the decision on every rank (broadcast it from "
            f"rank 0 first) and leave together",
        )


def _inside_one_rank_functions(model: ModuleModel, site: CallSite, reported: set[int]) -> Iterator[Finding]:
    """The call under the guard reaches a collective through the file's functions: name it also
    where it leaves the functions only that rank calls (the barrier in a helper it alone calls, or
    the call into a helper every rank shares)."""
    for inner in calls_into_shared_helpers(model, site):
        if id(inner.node) in reported:
            continue
        reach = model.ranks.collective_reached(inner, on_one_rank=True)
        if reach is None:
            continue
        reported.add(id(inner.node))
        yield RULE.finding(
            inner.node,
            f"`{reach}` runs here only on the ranks that call this function: the job hangs",
            why=f"every call of this function sits under a rank condition (or in a function called "
            f"that way), so only those ranks reach `{reach}` here; the other ranks never make the "
            f"matching call and the job hangs until the NCCL timeout; make the collective on every "
            f"rank, outside the rank condition",
        )


def _forwards_inside_one_rank_functions(model: ModuleModel, site: CallSite, reported: set[int]) -> Iterator[Finding]:
    """The wrapped model's forward inside the file's functions the guarded call reaches and that
    only one rank ever calls, when the function reads the model itself (`if self.is_main:
    self.save_sample()` -> `sample()` -> `self.G(z)`): named there as well, since running the
    unwrapped model there is the fix. A model handed in by the guarded call is its caller's."""
    facts, ranks = model.facts, model.ranks
    seen: set[int] = set()
    pending = [(site, 0)]
    while pending:
        call, depth = pending.pop()
        for function, _ in facts.functions_called_by(call):
            if id(function) in seen or depth >= _HELPER_DEPTH:
                continue
            seen.add(id(function))
            for inner in facts.calls_by_function.get(id(function), []):
                pending.append((inner, depth + 1))
                if id(inner.node) in reported or not ranks.forward_reads_the_wrapper_itself(inner):
                    continue  # none, or the model the guarded call hands over: reported there
                if not ranks.call_runs_on_one_rank_only(inner):
                    continue  # a helper every rank also calls: reported at the guarded call only
                reported.add(id(inner.node))
                yield RULE.finding(
                    inner.node,
                    "the DDP/FSDP-wrapped model runs forward here, in code only one rank reaches: its collectives hang",
                    why="every call of this function comes from code that runs on one rank only, so "
                    "this forward through the DistributedDataParallel/FSDP-wrapped model runs on that "
                    "rank alone: DDP's forward broadcasts buffers and FSDP all-gathers parameters, "
                    "collectives the other ranks never join; use the unwrapped model here "
                    "(`model.module`, `accelerator.unwrap_model(model)`)",
                )


# How many calls deep the wrapped forward is looked for below a guarded call.
_HELPER_DEPTH = 3


def _divergent_branches(model: ModuleModel, unguarded: list[BranchSite], reported: set[int]) -> Iterator[Finding]:
    """A collective under a condition whose value differs between the ranks (the clock, a value
    only one rank assigns): the ranks for which it holds wait for the others. `unguarded`: the
    branches with no single-rank arm."""
    facts = model.facts
    ranks = model.ranks
    watched = keys_assigned_on_one_rank(model) | keys_holding_clock_times(facts)
    for branch in unguarded:
        if not isinstance(branch.node, cst.If) or not may_diverge(facts, branch.test, watched):
            continue
        arms = (True, False) if branch.node.orelse is not None else (True,)
        candidates = []
        for arm in arms:
            for site in facts.calls_in_arm(branch, arm):
                if id(site.node) in reported or ranks.runs_on_one_rank_only(site.context):
                    continue
                reach = ranks.collective_reached(site, on_one_rank=True)
                if reach is not None and not reach.subgroup:
                    candidates.append((site, arm, reach))
        if not candidates:
            continue
        reason = divergent_condition(model, branch)
        if reason is None:
            continue
        for site, arm, reach in candidates:
            if _matched(model, branch, arm, site, reach.name):
                continue
            reported.add(id(site.node))
            yield RULE.finding(
                site.node,
                f"`{reach}` under a test that {reason}: the job hangs",
                why=f"the condition around `{reach}` {reason}, so it can hold on some ranks and not "
                f"on others; the ranks for which it holds block in the collective until the NCCL "
                f"timeout; decide on one rank and share the decision (broadcast it), or make the "
                f"collective on every rank",
            )


def _unmatched(model: ModuleModel, branch: BranchSite, arm: bool, site: CallSite) -> Optional[Finding]:
    ranks = model.ranks
    collective = ranks.collective_reached(site, on_one_rank=True)
    if collective is not None:
        if collective.subgroup and not (collective.function is None and ranks.group_every_rank_joins(site)):
            return None  # a subgroup: it may hold exactly the ranks that get here
        if _matched(model, branch, arm, site, collective.name):
            return None
        return RULE.finding(
            site.node,
            f"only the ranks that pass this rank condition call `{collective}`: the job hangs",
            why=f"only the ranks that pass this rank condition reach `{collective}`; the other ranks "
            f"never make the matching call, so the ranks that do block in it until the NCCL "
            f"timeout (30 min by default) or forever, and the job hangs with every GPU idle; call "
            f"the collective on every rank (outside the `if`), or make the same call in the "
            f"`else:` branch",
        )
    if ranks.wrapped_forward_reached(site):
        if _other_arm_runs_forward(model, branch, arm):
            return None
        return RULE.finding(
            site.node,
            "the DDP/FSDP-wrapped model runs forward on one rank only: its collectives hang",
            why="a forward pass through the DistributedDataParallel/FSDP-wrapped model runs on one rank "
            "only: DDP's forward broadcasts buffers (BatchNorm statistics) from rank 0 and FSDP "
            "all-gathers parameters, collectives the other ranks never join, so this rank hangs; "
            "run it on every rank, or call the unwrapped `model.module` here",
        )
    return None


def _matched(model: ModuleModel, branch: BranchSite, arm: bool, site: CallSite, name: str) -> bool:
    """The other ranks make the same collective: in the other arm of this `if`, or under a
    complementary rank condition elsewhere in the same function (the `torch_distributed_zero_first`
    shape: `if rank != 0: barrier()` ... work ... `if rank == 0: barrier()`)."""
    facts = model.facts
    ranks = model.ranks
    for other in facts.calls_in_arm(branch, not arm):
        reached = ranks.collective_reached(other)
        if reached is not None and reached.name == name:
            return True
    scope = site.context.scope
    rank_zero_here = _rank_zero_reaches_alone(model, site.context)
    for other in facts.calls:
        if other is site or other.context.scope is not scope:
            continue
        reached = ranks.collective_reached(other)
        if reached is None or reached.name != name:
            continue
        if (branch.node, arm) in other.context.branches:
            continue  # same arm: the same ranks
        if rank_zero_here and _rank_zero_reaches_alone(model, other.context):
            continue  # another rank-0 block of the function: rank 0 again, not the others
        if any(ranks.depends_on_rank(b.test, scope) for b, _ in other.context.branches):
            return True
    return False


def _rank_zero_only(model: ModuleModel, context) -> bool:
    """The place is reached by rank 0 alone: in the body of a rank-0 guard, in the `else:` of
    a guard of the other ranks, or past their early `return`."""
    ranks, scope = model.ranks, context.scope
    return ranks.after_other_ranks_left(context) or any(
        ranks.is_rank_zero_guard(b.test, scope) if in_body else ranks.is_other_ranks_guard(b.test, scope)
        for b, in_body in context.branches
    )


def _rank_zero_reaches_alone(model: ModuleModel, context) -> bool:
    """Rank 0 reaches the place, alone always or on some steps (`if is_rank0 and step % k == 0
    or last_step:`): a collective there is never the other ranks' answer to rank 0's."""
    return _rank_zero_only(model, context) or any(
        in_body and isinstance(guard, cst.If) and model.ranks.rank_zero_on_some_steps(guard, context)
        for guard, in_body in context.branches
    )


def _other_arm_runs_forward(model: ModuleModel, branch: BranchSite, arm: bool) -> bool:
    facts = model.facts
    return any(model.ranks.wrapped_forward_reached(s) for s in facts.calls_in_arm(branch, not arm))


RULE = Rule(
    code="DDP007",
    name="collective-in-rank-branch",
    summary="A collective (or a DDP forward) reached by only some ranks: the job hangs.",
    what="""
        In a distributed script, flags a `torch.distributed` collective (`barrier`, `all_reduce`,
        `broadcast`, `all_gather`, `reduce`, `scatter`, `gather`, the `*_object` variants,
        `reduce_scatter`, `all_to_all`, `new_group`) or an Accelerator collective
        (`wait_for_everyone`, `gather`, `reduce`, ...) made under a single-rank condition
        (`if rank == 0:`, `if is_main_process():`, `if accelerator.is_main_process:`, the `else:`
        of `if rank != 0:`, after `if rank != 0: return`, a rank read through `getattr(self,
        "global_rank", 0) == 0` or `getattr(trainer, "is_global_zero", False)`, ...) or under one that holds on rank 0
        alone whenever a rank-independent part is false (`if is_rank0 and step % 20 == 0 or
        last_step:`: every rank on the last step, rank 0 alone on every 20th), directly or inside a function of the file called there, when
        the other ranks make no matching call. Also flags a forward pass through an FSDP-wrapped
        model in such a branch, and through a `DistributedDataParallel`-wrapped one when the model
        may have buffers (the file mentions BatchNorm, `register_buffer`, torchvision or timm
        models, or the model is built by a class or factory of a project module that always
        declares buffers: `register_buffer` outside any condition, a BatchNorm layer, a
        torchvision / timm model) and `broadcast_buffers=False` is not passed. A collective
        is followed through the file's own helpers into the functions of other project modules
        (`validation_epoch()` -> the package's `engine.evaluate()` -> `all_reduce`), into the
        methods of an object a class keeps on `self` (`self.meter = Meter()` in `__init__`, then
        `if self.rank == 0: self.meter.log(x)` with `Meter.log` all-reducing), and so is
        such a wrapped model handed to a function of another project module that runs that
        parameter forward (`if rank == 0: evaluate(model, loader)` with `evaluate` in engine.py
        calling `model(x)` or `model.forward(x)`, itself or through engine.py's own functions;
        under `torch.no_grad()` too, as in the file: DDP's forward still broadcasts the buffers).
        A model that Accelerate or Lightning Fabric wraps (`model, opt = accelerator.prepare(model,
        opt)`, `self.gen, self.opt = self.accelerator.prepare(...)` in `__init__`, `fabric.setup(model)`)
        is such a wrapped model too, and building a DDP wrapper on one rank is itself the hang:
        `DistributedDataParallel(model)`, and `accelerator.prepare(...)` / `fabric.setup(...)` when
        handed a model (a value built by a `torch.nn` class or an `nn.Module` subclass of the file,
        returned by `unwrap_model` / `from_pretrained`, or whose `.parameters()` the file reads),
        since DDP's constructor checks every rank's parameters and broadcasts rank 0's weights.

        The rank-0 test may also be hidden: a helper of the file or of a project module whatever
        its name, whose every value in a distributed run is a rank-0 test (`def is_visualizer():
        return _rank == 0`, `_rank` set by a `global` statement of the set-up function; a `return
        True` only when no process group exists), or a `@property` of the class read as
        `self.leader` whose every value is one (`return self.fabric.global_rank == 0`); a rank kept in a dictionary (`cfg["rank"] =
        dist.get_rank()`, or a config's "local_rank" key); a flag parameter that every caller in
        the project sets to a rank-0 test (`validate(model, loader, verbose=dist.get_rank() == 0)`
        with `if verbose: dist.all_reduce(t)` inside, or a false default left); a decorator that
        runs the function on one rank only (Lightning's `@rank_zero_only`, mmcv's `@master_only`,
        `@accelerator.on_main_process`, or one of the file whose wrapper calls the function under
        a rank-0 test): its collectives are flagged inside it. The other ranks' early exit may be
        `sys.exit()` / `os._exit()` / `exit()` as well as `return`. A metric object's `compute()`
        counts as a collective when the object comes from torchmetrics or ignite (it gathers
        every rank's state first), unless built with `sync_on_compute=False`.

        It also flags the places where the ranks part ways before a collective
        (analysis/divergence.py):
        - an exit only the ranks under a single-rank condition take, in a loop whose body makes
          a collective (or a wrapped forward) on every rank: `if rank == 0: ... break` /
          `return` / `continue`; the others go on to the loop's next collective. Reported at
          the exit;
        - Lightning's `trainer.should_stop = True` set under a single-rank condition: that rank
          leaves `fit()` alone;
        - the other ranks leaving before a collective under a setting or a loop exit (`if rank
          != 0 and not cfg.shard_layers: return`, `if rank != 0: continue`). Reported at the
          exit;
        - a collective under a condition whose value differs between ranks: one that reads the
          wall clock (`time.time() - last >= interval`, or a name holding such a time), or a
          variable only a single-rank arm assigns (`reason = None` ... `if rank == 0: reason =
          "..."` ... `if reason is not None: broadcast(...)`);
        - inside a function of the file that only rank-guarded code calls, the call into a
          helper every rank also calls, whose collective it reaches (`write_index()` on rank 0
          -> `list_files()` -> `fetch()` with its barrier): reported there as well as at the
          guarded call, since either is where the fix may go; likewise the wrapped model's
          forward inside a function only rank-guarded code calls when the function reads the
          model itself (`if self.is_main: self.save_sample()` -> `sample()` -> `self.G(z)`), not
          when the guarded call hands the model in (`test(model, loader)`: the fix is the caller's).
    """,
    why="""
        A collective completes only when every rank of the group has called it. Under
        `if rank == 0:` only rank 0 calls it: rank 0 blocks, the others run on and block in the
        next collective they reach (a different one, or the next step's gradient all-reduce), and
        the job hangs until the NCCL watchdog kills it, typically 10-30 minutes later, with every
        GPU idle. DDP's forward is such a collective too: it broadcasts buffers from rank 0, and
        FSDP all-gathers the parameters.
    """,
    fix="""
        Make the collective on every rank (move it out of the `if`), or make the matching call in
        the `else:` branch (`dist.gather(t, gather_list, dst=0)` on rank 0 and
        `dist.gather(t, dst=0)` on the others). For evaluation or logging on rank 0 alone, use the
        unwrapped model (`model.module`) and no collectives.
    """,
    silent="""
        - A matching call of the same collective in the `else:` branch, or under the complementary
          rank condition in the same function (`if local_rank not in (-1, 0): barrier()` ...
          `if local_rank == 0: barrier()`, the `torch_distributed_zero_first` shape).
        - A guard `rank == 0 or C` whose collective sits under a further condition that requires
          `C` (`if not legacy or rank == 0:` ... `if not legacy: dcp.save(...)`; or in the `else:`
          of `if legacy:`): every rank that gets there passes. Also `rank == "cpu"`-style sides,
          false on every rank of a distributed run, count as false.
        - Collectives with an explicit `group=`: the group may hold exactly the ranks that get
          there; unless the same function makes a collective on that same group on every rank
          (`barrier(group=gloo)` ... `if rank == 0: ... barrier(group=gloo)`), which shows every
          rank belongs to it: that one is reported.
        - `model.module(...)` under a rank-0 guard, point-to-point `send` / `recv`; also
          `evaluate(model.module, loader)` or the unwrapped model handed to another module's
          function, and one that unwraps its parameter first (`model = model.module`) or calls
          only `model.module(x)`.
        - A rank-0 forward through a DDP model with no sign of buffers (a GPT with flash
          attention has none, so DDP broadcasts nothing; nor does one whose model module
          registers its causal mask only when fused attention is missing); DDP010 still reports
          a whole evaluation pass there.
        - A metric built with `sync_on_compute=False`, or any `compute()` of an object that does
          not come from torchmetrics / ignite (a running mean of the project's own).
        - A flag parameter that some caller sets true on every rank (`verbose=True`), and a
          decorator whose wrapper calls the function on every rank (a timer that prints on rank 0).
        - Non-distributed scripts (Accelerate and Lightning scripts count as distributed: their
          launchers start the processes).
        - `accelerator.prepare(loader)` / `fabric.setup_dataloaders(...)` on one rank: no model,
          no wrapper built; and a forward through `accelerator.unwrap_model(model)`.
        - Test code (pytest / unittest files).
        - An exit taken in both arms of the rank condition, or from a loop that makes no
          collective on every rank; a stop decision shared afterwards through a collective
          (`trainer.strategy.reduce_boolean_decision(...)`, `dist.broadcast(stop, 0)`).
        - The other ranks' exit under a setting when the collective itself sits under the
          opposite setting (`if rank != 0 and not shard: return` ... `if shard: barrier()`).
        - A clock value or one-rank value handed to a collective in the same function before
          the condition reads it (`dist.broadcast(over, 0)`): the ranks agree on it.
        - A shared helper called with a literal flag that skips its collective
          (`fetch(name, wait=False)`), in the file or in another project module
          (`log_event(key, value, sync=False)` where `log_event` makes its barrier only `if
          sync:`; by keyword or by position).
    """,
    blind_spots="""
        - Buffers are inferred from the file's text and from the project module whose class
          or factory builds the wrapped model (`DDP(Net().cuda())`); a model built by a chain of
          helpers (`build_model(cfg)` returning a registry's class) or wrapped by a helper of
          another module (`ddp_wrap(model)`) is not followed, and a buffer registered only under
          a condition (`if not self.flash:`) counts as absent.
        - An argument of `accelerator.prepare(...)` counts as a model only on the evidence listed
          above; a model handed in as a parameter whose `.parameters()` the file never reads is
          missed. A forward through any value unpacked from a prepare call that was handed a
          model counts (`model, opt = accelerator.prepare(model, opt)`): the other values are
          optimizers and loaders, which nobody calls.
        - Conditions that split the ranks other ways (`if rank % 2:`) are not checked, except
          `rank % n == 0` (the first rank of each node, as `local_rank == 0`).
        - A matching call in another function (the other ranks wait in a callback) is not seen.
          Collectives inside helpers of other project modules (`reduce_mean` from `dist_utils`,
          also when called through the file's own functions, or through a module imported as
          such: `from utils import comm` then `comm.reduce_dict(m)`) are followed one import
          deep, within the file's project; such a call is also what makes a module with no
          `torch.distributed` of its own count as distributed.
        - An early exit of the other ranks counts only in the same function (`if rank != 0:
          return` ... `dist.barrier()`, or a call there that reaches a collective); one in a caller
          does not.
        - Framework methods that synchronise inside are known by name for Lightning
          (`trainer.save_checkpoint`, Fabric's `save` / `load` / `barrier` / ...; see
          torch_api.FRAMEWORK_COLLECTIVES); DeepSpeed's engine `save_checkpoint` / `load_checkpoint`
          and an FSDP module's `state_dict()` when the object is followed to
          `deepspeed.initialize(...)` / `FullyShardedDataParallel(...)` in the file (not when it
          comes from another file); `torch.distributed.checkpoint` `save` / `load` /
          `async_save` (unless `no_dist=True`); and, in a LightningModule subclass of the file,
          `self.all_gather(...)` and `self.log(..., sync_dist=True)` / `self.log_dict(...)`;
          others are not (a LightningModule whose base class lives in another file is not
          recognised).
        - A rank-0 flag handed to a function (`validate(..., verbose=rank == 0)`) or to a
          constructor that keeps it on the object (`Trainer(is_visualizer=dist.is_visualizer())`,
          then `if ... and self.is_visualizer: all_reduce(...)` in a method) is seen only when the
          module that tests it holds a rank word somewhere, a comment included (the screen: a
          module with none is not analysed for this rule), and only as a parameter `__init__`
          stores unchanged. A DDP model handed as a parameter from another module (a rank-0
          `evaluate(model)` whose caller in main.py wrapped the model) is not seen.
        - A forward of the wrapped model inside a function of another module that the rank-0
          code hands it to is seen only when that module is summarised: one whose code calls
          none of the things a module summary reads (a collective, `backward()`, a DataLoader,
          `torch.device(...)`, ...) is not parsed for its callers, so an `eval.py` holding only
          `evaluate(model, loader)` with `model(x)` under `torch.no_grad()` is not followed. A
          forward in a method of another module's class, or of a parameter the callee rebinds
          (`model = model.module if ... else model`), is not counted.
        - A collective reached through a method of another module's class
          (`DistribTorch.instance().barrier()`, or `self.meter.log(x)` with `Meter` imported) is
          not followed; a class of the file is.
        - A file that names no collective, DDP/FSDP class or rank word is not analysed for this
          rule (the screen), even when it calls a helper of another module that makes one under
          a clock condition, or tests the rank only through another module's helper of a name
          that is no rank word (`if comm.leader(): all_reduce(...)` in a file that never names a
          rank). A helper of another module is read for a returned rank test only when its own
          compiled code names a rank word (`return _rank == 0`, `os.environ["RANK"]`): one that
          returns another helper's test without naming a rank is not.
        - A collective under a test of data each rank computes for itself (`if
          len(sharded_params) > 0: all_reduce(...)`, the list built from the parameters this
          rank's optimizer shard holds) is not seen: the same test on a list every rank builds
          alike is the common, correct case.
        - A collective inside the data pipeline (a distributed dataset whose iterator
          synchronises when `iter(loader)` is called) under a rank-0 evaluation is not seen.
        - Values that differ between ranks other than the wall clock and one-rank assignments
          (a per-rank random draw, a file one rank wrote, a test on what each process's own log
          buffer holds) are not traced into conditions.
        - A one-rank value kept on an object and read by another method: a counter reset only
          past the other ranks' early `return` in one method (`update_best_model`) and tested
          by the loop condition of another (`continue_training`) sends the other ranks out of
          training early; the attribute is not followed between methods.
        - A project's own rank-0 helper is recognised by its name when it is a usual one
          (`is_main_process()`, `is_master()`, `is_rank_zero()` ...), or by what it returns when
          it is a plain function of the file or of a project module; a method of another
          module's class or a helper whose answer comes another way (a value it caches, a
          framework call) only once declared in `rank-zero-functions` (README, Configuration).
        - A collective in an `except` handler is reached only by the ranks whose `try` body
          raised (an out-of-memory error on one rank): not seen, since the same handler is
          correct when every rank raises alike (a missing file all of them read).
    """,
    triggers=tuple(
        name.encode()
        for name in sorted(
            COLLECTIVES
            | ACCELERATOR_COLLECTIVES
            | LIGHTNING_MODULE_COLLECTIVES
            | {"DistributedDataParallel", "FullyShardedDataParallel", "fully_shard", "save_checkpoint", "load_checkpoint", "sync_dist"}
            # torch.distributed.checkpoint, imported by module path or `from torch.distributed import checkpoint`
            | {"distributed.checkpoint", "import checkpoint"}
            # a metric whose `compute()` gathers every rank's state (torch_api.METRICS_SYNCING_ON_COMPUTE)
            | {"torchmetrics", "ignite.metrics"}
        )
    ),
    distributed_only=True,  # "accelerate" counts as a distributed token
    # Every finding sits in the single-rank arm of a branch (`single_rank_arm`) or after an
    # early exit of the other ranks (`after_other_ranks_left`): no rank guard, no finding.
    requires=(RANK_GUARD_WORDS,),
    check=check,
    invalid=(
        """
        import torch.distributed as dist

        dist.init_process_group("nccl")
        if dist.get_rank() == 0:
            torch.save(model.state_dict(), "ckpt.pt")
            dist.barrier()  # <- DDP007
        """,
        """
        import torch
        import torch.distributed as dist

        def mean_loss(loss):
            dist.all_reduce(loss)
            return loss / dist.get_world_size()

        dist.init_process_group("nccl")
        rank = dist.get_rank()
        for step, batch in enumerate(loader):
            loss = train_step(batch)
            if rank == 0 and step % 100 == 0:
                print(mean_loss(loss))  # <- DDP007
        """,
        """
        import torch.distributed as dist

        def save(model, rank):
            if rank != 0:
                return
            torch.save(model.state_dict(), "ckpt.pt")
            dist.barrier()  # <- DDP007
        """,
        """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("nccl")
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8)).cuda(local_rank)
        model = DDP(net, device_ids=[local_rank])
        if dist.get_rank() == 0:
            with torch.no_grad():
                val_logits = model(val_batch)  # <- DDP007
        """,
    ),
    valid=(
        """
        import torch.distributed as dist

        dist.init_process_group("nccl")
        if dist.get_rank() == 0:
            torch.save(model.state_dict(), "ckpt.pt")
        dist.barrier()
        """,
        """
        import torch.distributed as dist

        def save(model, rank):
            dist.barrier()  # every rank, before the others leave
            if rank != 0:
                return
            torch.save(model.state_dict(), "ckpt.pt")
        """,
        """
        import torch.distributed as dist

        dist.init_process_group("nccl")
        rank = dist.get_rank()
        if rank == 0:
            gathered = [torch.zeros_like(t) for _ in range(dist.get_world_size())]
            dist.gather(t, gathered, dst=0)
        else:
            dist.gather(t, dst=0)
        """,
        """
        # torch_distributed_zero_first: the other ranks wait first, rank 0 releases them after.
        import torch.distributed as dist
        from contextlib import contextmanager

        @contextmanager
        def zero_first(local_rank):
            if local_rank not in (-1, 0):
                dist.barrier()
            yield
            if local_rank == 0:
                dist.barrier()
        """,
        """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("nccl")
        model = DDP(net, device_ids=[local_rank])
        if dist.get_rank() == 0:
            with torch.no_grad():
                val_logits = model.module(val_batch)  # the plain module: no collective
        """,
    ),
)
