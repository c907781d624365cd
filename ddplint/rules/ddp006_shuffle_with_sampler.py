"""DDP006 shuffle-with-sampler."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from ddplint.analysis.facts import CallSite
from ddplint.analysis.loaders import constructs, parent_constructor_calls
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.syntax import alternatives, argument, double_star_args, int_value, is_none, is_true
from ddplint.analysis.torch_api import (
    DATALOADER,
    DATALOADER_POSITIONS,
    DISTRIBUTED_SAMPLER,
    SUBSET_SAMPLERS,
    WHOLE_DATASET_SAMPLERS,
)
from ddplint.edits import remove_argument
from ddplint.rules.base import Finding, FindingFix, Rule, held_as

# The DataLoader arguments whose combinations DataLoader refuses, at their positions.
POSITIONS = {name: DATALOADER_POSITIONS[name] for name in ("batch_size", "shuffle", "sampler", "batch_sampler", "drop_last")}
# torch's samplers that yield one index at a time: as a `batch_sampler` each "batch" is an int.
PER_INDEX_SAMPLERS = DISTRIBUTED_SAMPLER | WHOLE_DATASET_SAMPLERS | SUBSET_SAMPLERS | {"torch.utils.data.SequentialSampler"}


def check(model: ModuleModel) -> Iterator[Finding]:
    # Only torch's own DataLoader raises; a subclass may take these arguments differently, but
    # its `super().__init__(...)` is a call of DataLoader itself.
    facts = model.facts
    sites = facts.calls_constructing(DATALOADER, set()) + parent_constructor_calls(facts, DATALOADER)
    for site in sites:
        message = _conflict(model, site)
        if message is not None:
            named = held_as(facts, site.node, "DataLoader")
            if message is SHUFFLE_CLASH:
                short = f"{named} gets both a sampler and shuffle=True: DataLoader raises ValueError"
                yield RULE.finding(site.node, short, _drop_shuffle_fix(site.node), why=message)
            elif message is PER_INDEX_BATCHES:
                short = f"{named} gets a sampler of single indices as its batch_sampler: each batch is one int"
                yield RULE.finding(site.node, short, why=message)
            else:
                short = f"{named} gets a batch_sampler with options it excludes: DataLoader raises ValueError"
                yield RULE.finding(site.node, short, why=message)


def _conflict(model: ModuleModel, site: CallSite) -> Optional[str]:
    passed = {name: _passed(model, site, name, position) for name, position in POSITIONS.items()}
    if _may_be_given(model, site, passed["batch_sampler"]):
        if _may_be_per_index_sampler(model, site, passed["batch_sampler"]):
            return PER_INDEX_BATCHES
        always_given = _surely_given(model, site, passed["batch_sampler"])
        clashing = [
            name
            for name in ("shuffle", "drop_last")
            if _surely_true(passed[name]) or (always_given and _left_to_callers(model, site, passed[name]))
        ]
        if passed["batch_size"] and not any(_may_be_one(value) for value in passed["batch_size"]):
            clashing.append("batch_size")
        if _may_be_given(model, site, passed["sampler"]):
            clashing.append("sampler")
        if clashing:
            listed = ", ".join(f"`{name}`" for name in clashing)
            return (
                f"DataLoader gets a batch_sampler together with {listed}: torch raises ValueError "
                f"('batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                f"drop_last') when this line runs, on every rank; the batch sampler decides batch size, "
                f"order and the last batch, so pass only batch_sampler"
            )
        return None
    if _surely_true(passed["shuffle"]) and _may_be_given(model, site, passed["sampler"]):
        return SHUFFLE_CLASH
    return None


def _passed(model: ModuleModel, site: CallSite, name: str, position: int) -> list[cst.BaseExpression]:
    """What the call gives for argument `name`: the argument as written, else the entries under
    `name` of the dicts it unpacks (`DataLoader(ds, sampler=s, **train_kwargs)` where
    `train_kwargs.update({"shuffle": True})`). Empty when not given, or when an unpacked dict
    cannot be read (it may or may not hold the argument: nothing is assumed)."""
    written = argument(site.node, name, position)
    if written is not None:
        return [written]
    values: list[cst.BaseExpression] = []
    for kwargs in double_star_args(site.node):
        entries = model.data.unpacked_entries(kwargs, site.context.scope, name)
        if entries is None or any(entry is None for entry in entries):
            return []  # unreadable, or an item whose value is not written out (`d[k] += v`)
        values += entries
    return values


SHUFFLE_CLASH = (
    "DataLoader gets both a sampler and shuffle=True: torch raises ValueError ('sampler "
    "option is mutually exclusive with shuffle') when this line runs, so the job dies at "
    "start-up on every rank; the sampler decides the order (DistributedSampler shuffles by "
    "itself), so drop shuffle=True (also from the keyword-argument dicts the call unpacks)"
)
PER_INDEX_BATCHES = (
    "DataLoader gets a sampler that yields single indices (DistributedSampler, RandomSampler, "
    "SequentialSampler, ...) as its `batch_sampler`: the loader then takes each index for a whole "
    "batch and fails on the first batch ('int' object is not iterable) on the path that picks "
    "that sampler; wrap it in a `BatchSampler(sampler, batch_size, drop_last)`, or pass it as "
    "`sampler=` with `batch_size=`"
)


def _drop_shuffle_fix(call: cst.Call) -> Optional[FindingFix]:
    """Delete `shuffle=True` with one of its separators. Safe: with the sampler there the call
    raises, so no working program loses anything (the sampler already decides the order)."""
    shuffle = next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == "shuffle"), None)
    if shuffle is None:
        return None  # passed by position: dropping it would shift the arguments after it
    edit = remove_argument(call, shuffle)
    if edit is None:
        return None
    return FindingFix("Remove `shuffle=True` (the sampler decides the order)", (edit,))


def _surely_true(values: list[cst.BaseExpression]) -> bool:
    """Given, and a literal `True` on every path the tool can see."""
    return bool(values) and all(is_true(value) for value in values)


def _may_be_one(expr: cst.BaseExpression) -> bool:
    """`batch_size=1` (torch's default) is the one value a batch_sampler tolerates."""
    return any(int_value(option) == 1 for option in alternatives(expr))


def _may_be_given(model: ModuleModel, site: CallSite, values: list[cst.BaseExpression]) -> bool:
    """The argument is, on some path, a real object: one of its sources is known and not None.
    An untraceable value (a parameter nobody in the file passes) is not assumed to be one."""
    flow = model.data.flow
    return any(
        not source.unknown and not is_none(source.node)
        for value in values
        for source in flow.sources(value, site.context.scope, site.context.branches)
    )


def _surely_given(model: ModuleModel, site: CallSite, values: list[cst.BaseExpression]) -> bool:
    """The argument is a real object on every path the tool can see (every source known and not
    None): the function itself always supplies it."""
    flow = model.data.flow
    sources = [source for value in values for source in flow.sources(value, site.context.scope, site.context.branches)]
    return bool(sources) and all(not source.unknown and not is_none(source.node) for source in sources)


def _left_to_callers(model: ModuleModel, site: CallSite, values: list[cst.BaseExpression]) -> bool:
    """The value is a parameter of the function around the call that its callers set (no call in
    this file passes it, or one passes a value read at run time such as `loader.drop_last`):
    the function offers a choice whose only legal answer is False."""
    flow = model.data.flow
    for value in values:
        for source in flow.sources(value, site.context.scope, site.context.branches):
            if source.unknown and source.parameter is not None:
                return True
            if source.via and source.node is not None and isinstance(source.node, cst.Attribute):
                return True
    return False


def _may_be_per_index_sampler(model: ModuleModel, site: CallSite, values: list[cst.BaseExpression]) -> bool:
    """On some path the batch_sampler is one of torch's samplers of single indices."""
    flow = model.data.flow
    return any(
        constructs(model.facts, source.node, PER_INDEX_SAMPLERS, set())
        for value in values
        for source in flow.sources(value, site.context.scope, site.context.branches)
    )


RULE = Rule(
    code="DDP006",
    name="shuffle-with-sampler",
    summary="shuffle=True (or batch_size / drop_last) next to a sampler: the DataLoader raises at start-up.",
    what="""
        Flags a `torch.utils.data.DataLoader(...)` that is given a `sampler` together with
        `shuffle=True`, or a `batch_sampler` together with `shuffle=True`, `drop_last=True`, a
        `sampler`, or a `batch_size` other than 1. Arguments are found by keyword or position, and
        a sampler held in a variable counts when some path gives it a value other than `None`
        (`sampler = DistributedSampler(ds) if distributed else None` next to `shuffle=True` raises
        on the distributed path). Arguments the call unpacks from a dict (`**train_kwargs`)
        count too: the dict's literal entries, items set on it, and dicts merged into it with
        `update()` on some path (`train_kwargs.update({"shuffle": True, ...})` on the CUDA
        path, then `DataLoader(ds, sampler=sampler, **train_kwargs)`).

        Also flagged: a `DataLoader` subclass whose `__init__` builds itself with
        `super().__init__(batch_sampler=..., drop_last=drop_last)`, always with its own batch
        sampler, while forwarding a `shuffle` / `drop_last` its callers choose (a parameter, or
        a caller passing `loader.drop_last`): every caller that asks for True crashes. And one
        of torch's samplers of single indices (`DistributedSampler`, `RandomSampler`, ...)
        passed as `batch_sampler` on some path: the loader takes each index for a whole batch.
    """,
    why="""
        torch checks these combinations when the DataLoader is built and raises `ValueError`: the
        job dies on every rank before the first step, usually after the expensive set-up (model
        download, dataset preparation) and often only on the multi-GPU path that was not tried
        locally. The common cause is adding `sampler=DistributedSampler(ds)` to a single-GPU
        loader that already had `shuffle=True`.
    """,
    fix="""
        Drop `shuffle=True` from the DataLoader: a `DistributedSampler` shuffles by itself (its
        `shuffle` argument, default True). For a single-GPU fallback write
        `shuffle=(sampler is None)`. With a `batch_sampler`, pass only the batch sampler: it decides
        the batch size, order and what happens to the last batch.
    """,
    silent="""
        - `shuffle=(sampler is None)`, `shuffle=False`, `shuffle=args.shuffle`: only a literal
          `True` is known to clash.
        - A sampler that is `None` on every path the tool can see, or a value it cannot trace
          (a parameter no code in the file passes).
        - Calls of DataLoader subclasses, which may accept these arguments differently (their
          own `super().__init__(...)` is checked, when the direct base is torch's DataLoader).
        - A forwarded `shuffle` / `drop_last` next to a batch sampler that is itself the
          caller's choice (`batch_sampler=None` parameter): the caller decides both.
        - A project sampler passed as `batch_sampler`: it may well yield lists of indices.
        - A `**kwargs` dict the tool cannot read in full (built by a call, merged with a dict
          from a call, given a key that is not literal), or whose `shuffle` entry is not `True`
          on every path (`kwargs["shuffle"] = False` later).
    """,
    blind_spots="""
        - A dict unpacked with `**` that comes from another module's function, or is filled
          by a function it is passed to, is not read.
        - `shuffle=flag` with `flag = True` elsewhere is not followed.
    """,
    triggers=(b"*DataLoader*",),
    distributed_only=False,
    check=check,
    invalid=(
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("nccl")
        sampler = DistributedSampler(train_set)
        train_loader = DataLoader(train_set, batch_size=32, shuffle=True, sampler=sampler)  # <- DDP006
        """,
        """
        import torch.utils.data

        train_sampler = torch.utils.data.distributed.DistributedSampler(train_set) if args.distributed else None
        loader = torch.utils.data.DataLoader(train_set, 64, True, train_sampler)  # <- DDP006
        """,
        """
        from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

        batches = BatchSampler(DistributedSampler(train_set), batch_size=32, drop_last=True)
        loader = DataLoader(train_set, batch_sampler=batches, batch_size=32)  # <- DDP006
        """,
    ),
    valid=(
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("nccl")
        sampler = DistributedSampler(train_set)  # shuffles by itself
        train_loader = DataLoader(train_set, batch_size=32, sampler=sampler)
        """,
        """
        # The ImageNet example's shape: shuffle only when there is no sampler.
        import torch.utils.data

        train_sampler = torch.utils.data.distributed.DistributedSampler(train_set) if args.distributed else None
        train_loader = torch.utils.data.DataLoader(
            train_set, batch_size=256, shuffle=(train_sampler is None), sampler=train_sampler
        )
        """,
        """
        from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

        batches = BatchSampler(DistributedSampler(train_set), batch_size=32, drop_last=True)
        loader = DataLoader(train_set, batch_sampler=batches, num_workers=4)
        """,
        """
        # shuffle=True with no sampler at all is the single-GPU default.
        from torch.utils.data import DataLoader

        sampler = None
        loader = DataLoader(train_set, batch_size=32, shuffle=True, sampler=sampler)
        """,
    ),
)
