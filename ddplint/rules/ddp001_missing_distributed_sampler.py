"""DDP001 missing-distributed-sampler."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from ddplint.analysis.facts import ModuleFacts
from ddplint.analysis.loaders import SamplerKind, builders_hand_whole_datasets
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.syntax import keyword_arg, positional_args
from ddplint.analysis.torch_api import DISTRIBUTED_SAMPLER_MODULES
from ddplint.edits import ensure_import
from ddplint.rules.base import Finding, FindingFix, NodeEdit, Rule, held_as


def check(model: ModuleModel) -> Iterator[Finding]:
    facts = model.facts
    if not model.distributed:
        return
    data = model.data
    if data.loader_model.model_parallel:
        return  # tensor / pipeline parallel ranks must share batches; the data-parallel split is the mesh's
    for loader in data.loaders:
        if loader.sampler is SamplerKind.PRESENT:
            continue
        if not data.is_training_loader(loader):
            continue  # evaluation-only: redundant work at worst, never wrong results
        if model.ranks.runs_on_one_rank_only(loader.site.context):
            continue  # only one rank iterates it; the others get their data some other way
        if not model.where.in_a_rank(loader.site.context):
            continue  # the `else` of `if args.distributed:`, the launcher: one process, the whole dataset is right
        if data.is_test_on_made_up_data(loader):
            continue  # a test: every rank gets the same made-up batches on purpose
        if data.dataset_comes_from_caller(loader) and not builders_hand_whole_datasets(model, loader):
            continue  # the caller, in another file, may have sharded it already
        if data.is_filled_as_it_runs(loader):
            continue  # a buffer of this rank's own rollouts: per-rank data, shuffled locally
        if data.handed_to_framework(loader) or data.is_iterable_dataset(loader) or data.is_sharded_by_hand(loader):
            continue
        named = held_as(facts, loader.site.node, "this DataLoader")
        if loader.built_in is not None and facts.project is not None:
            factory = facts.project.loader_factory(facts, loader.site)
            if factory is not None and factory.judged_there and not loader.single_process_arm:
                continue  # reported where it is built
            short = f"`{loader.site.name}(...)` returns a DataLoader with no DistributedSampler: every rank iterates it all"
            if loader.single_process_arm:
                short = f"`{loader.site.name}(...)` is told the run is not distributed: it returns a DataLoader with no DistributedSampler"
            message = (
                f"`{loader.site.name}(...)` returns a DataLoader (built at {loader.built_in}) with no "
                f"DistributedSampler, and this distributed script trains on it: every rank iterates "
                f"the whole dataset, so an epoch does world_size times the work; give that "
                f"DataLoader sampler=DistributedSampler(dataset) (and drop shuffle=True)"
            )
            if loader.single_process_arm:
                message = (
                    f"`{loader.site.name}(...)` picks its loader by an argument on the run's mode, "
                    f"and this call's value (or the default it leaves) is false in every rank of "
                    f"this distributed script, so it returns the DataLoader of its single-process "
                    f"path (built at {loader.built_in}), which has no DistributedSampler: every rank "
                    f"iterates the whole dataset, so an epoch does world_size times the work; pass "
                    f"the run's mode (`distributed=dist.is_initialized()`)"
                )
        elif (assigned := data.loader_model.sampler_set_afterwards(loader)) is not None:
            message = (
                f"this DataLoader gets its sampler after it is built "
                f"(`{' '.join(facts.module.code_for_node(assigned).split())}`), which DataLoader refuses: "
                f"setting `sampler` / `batch_sampler` on an initialised DataLoader raises ValueError, "
                f"so the script stops there, and the loader as built has no DistributedSampler (every "
                f"rank would iterate the whole dataset); pass sampler=DistributedSampler(dataset) to "
                f"the DataLoader(...) call instead"
            )
            short = f"{named} gets its sampler after it is built, which DataLoader refuses (ValueError)"
            yield RULE.finding(loader.site.node, short, why=message)  # no fix: the assignment must go too
            continue
        elif (off_ranks := data.loader_model.sampler_built_off_the_ranks(loader)) is not None:
            built = " ".join(facts.module.code_for_node(off_ranks).split())
            message = (
                f"the sampler of this DataLoader (`{built}`) is built only on the single-process "
                f"path: the test that picks it is the wrong way round, so every rank of the "
                f"distributed run gets {'a sampler over the whole dataset' if loader.sampler is SamplerKind.WHOLE_DATASET else 'no sampler'} "
                f"and iterates the whole dataset (an epoch does world_size times the work), while "
                f"the single process gets a DistributedSampler; swap the arms (`DistributedSampler(ds) "
                f"if distributed else None`)"
            )
            short = f"{named} gets its DistributedSampler only on the single-process path: every rank iterates the whole dataset"
            yield RULE.finding(loader.site.node, short, why=message)  # no fix: which test is meant is the author's call
            continue
        elif loader.sampler is SamplerKind.WHOLE_DATASET and (helper := data.loader_model.unsharding_helper_of(loader)):
            message = (
                f"the sampler of this DataLoader comes from `{helper}(...)`, which returns there only "
                f"None or a sampler over the whole dataset (RandomSampler / WeightedRandomSampler), "
                f"never a DistributedSampler: in this distributed script every rank iterates the "
                f"whole dataset, so an epoch costs world_size times the work; build "
                f"DistributedSampler(dataset) for the distributed run (it shuffles too)"
            )
            short = f"{named} gets its sampler from `{helper}(...)`, never a DistributedSampler: every rank iterates the whole dataset"
        elif loader.sampler is SamplerKind.WHOLE_DATASET:
            message = (
                "DataLoader uses a RandomSampler in a distributed script: it permutes the whole "
                "dataset on every rank, so each rank trains on all of it and an epoch costs world_size "
                "times the work; use DistributedSampler(dataset) (it shuffles too)"
            )
            short = f"{named} uses a RandomSampler: every rank iterates the whole dataset"
        elif (unpassed := data.unpassed_sampler_for(loader)) is not None:
            built = " ".join(facts.module.code_for_node(unpassed.site.node).split())
            holders = facts.assigned_to.get(id(unpassed.site.node), ())
            if len(holders) == 1:
                built = f"{next(iter(holders))} = {built}"
            message = (
                f"a DistributedSampler is built for this dataset (`{built}`) but never passed to "
                f"this DataLoader, so it shards nothing: every rank iterates the whole dataset, an "
                f"epoch does world_size times the work and the ranks train on the same batches; "
                f"pass it as sampler= and drop shuffle=True"
            )
            sampler = held_as(facts, unpassed.site.node, "a DistributedSampler")
            short = f"{sampler} is built but never passed to {named}: every rank iterates the whole dataset"
            yield RULE.finding(loader.site.node, short, _pass_sampler_fix(facts, loader, unpassed), why=message)
            continue
        else:
            message = (
                "DataLoader has no DistributedSampler in a distributed script: every rank iterates "
                "the whole dataset, so an epoch does world_size times the work and the ranks train on "
                "the same batches; pass sampler=DistributedSampler(dataset) and drop shuffle=True"
            )
            short = f"{named} has no DistributedSampler: every rank iterates the whole dataset"
        yield RULE.finding(loader.site.node, short, _sampler_fix(facts, loader), why=message)


def _pass_sampler_fix(facts: ModuleFacts, loader, sampler) -> Optional[FindingFix]:
    """Hand the existing sampler over as `sampler=<name>`, in place of `shuffle=`; offered only
    when one plain variable in the loader's scope holds that sampler and nothing else."""
    call = loader.site.node
    if any(arg.star for arg in call.args) or len(positional_args(call)) > 2:
        return None
    names = facts.assigned_to.get(id(sampler.site.node), ())
    scope = loader.site.context.scope
    name = next(iter(names)) if len(names) == 1 else None
    if name is None or not name.isidentifier():
        return None
    bindings = scope.lookup(name)
    if not bindings or any(binding.value is not sampler.site.node for binding in bindings):
        return None
    shuffle = keyword_arg(call, "shuffle")
    if shuffle is not None and shuffle.keyword is not None:
        edit = NodeEdit(f"sampler={name}", shuffle.keyword, end=shuffle.value)
    else:
        edit = NodeEdit(f", sampler={name}", call.args[-1].value, "after")
    return FindingFix(f"Pass `sampler={name}` to the DataLoader", (edit,), "unsafe")


def _sampler_fix(facts: ModuleFacts, loader) -> Optional[FindingFix]:
    """Pass `sampler=DistributedSampler(<dataset>, shuffle=<what the loader had>)`, replacing the
    loader's `shuffle` (DistributedSampler and `shuffle=` cannot be combined) or its RandomSampler,
    and import DistributedSampler if needed. Unsafe: each rank then trains on its own shard, which
    changes the steps per epoch and what learning-rate schedules see."""
    call = loader.site.node
    dataset = loader.dataset
    if any(arg.star for arg in call.args) or not isinstance(dataset, (cst.Name, cst.Attribute)):
        return None  # the sampler may hide in **kwargs; a dataset expression must not be rebuilt
    if len(positional_args(call)) > 2:
        return None  # shuffle or sampler passed by position: rare, leave it to the user
    name, import_edit = _sampler_name(facts)
    if name is None:
        return None
    dataset_code = facts.module.code_for_node(dataset)
    if loader.sampler is SamplerKind.WHOLE_DATASET:
        given = keyword_arg(call, "sampler")
        if given is None:
            return None
        edit = NodeEdit(f"{name}({dataset_code})", given.value)
    else:
        shuffle = keyword_arg(call, "shuffle")
        if keyword_arg(call, "sampler") is not None:
            return None  # a leftover `sampler=None` beside it: a second `sampler=` would not compile
        if shuffle is not None and shuffle.keyword is not None:
            order = facts.module.code_for_node(shuffle.value)
            edit = NodeEdit(f"sampler={name}({dataset_code}, shuffle={order})", shuffle.keyword, end=shuffle.value)
        else:  # DataLoader's default is a fixed order: keep it
            edit = NodeEdit(f", sampler={name}({dataset_code}, shuffle=False)", call.args[-1].value, "after")
    edits = (edit,) if import_edit is None else (import_edit, edit)
    return FindingFix(f"Pass `sampler={name}({dataset_code})` to the DataLoader", edits, "unsafe")


def _sampler_name(facts: ModuleFacts) -> tuple[Optional[str], Optional[NodeEdit]]:
    """The module-level name DistributedSampler is imported under, else the edit that imports it.
    (None, None) when the name is taken by something else."""
    return ensure_import(
        facts.module, "torch.utils.data", "DistributedSampler", DISTRIBUTED_SAMPLER_MODULES, taken=facts.module_scope.bindings
    )


RULE = Rule(
    code="DDP001",
    name="missing-distributed-sampler",
    summary="A training DataLoader in a distributed script gives every rank the whole dataset.",
    what="""
        Flags a `torch.utils.data.DataLoader(...)` in a distributed script (one that calls
        `init_process_group`, builds `DistributedDataParallel` / FSDP, uses
        `torch.multiprocessing.spawn` or reads `LOCAL_RANK` / `RANK` / `WORLD_SIZE`) that is trained
        on but gets no `sampler` / `batch_sampler`, or only a `RandomSampler`. The sampler is looked
        for as a keyword, positionally, through variables (`sampler if distributed else None`), and
        inside a `**loader_kwargs` dict (also one a function of another project module builds
        and returns). DataLoader drop-ins count as DataLoaders: torchdata's `StatefulDataLoader`,
        PyG's graph `DataLoader` (`torch_geometric.loader.DataLoader`) and `DataLoader` subclasses
        of the file or of another module of the project. When a DistributedSampler (or a
        subclass of it, also one another module of the project defines and its package
        re-exports, such as a fault-tolerant `DistributedSampler` over replica groups) is built
        over the same dataset in the same function but given to no loader, the message names it,
        and the fix passes it. Building such a project subclass (of DistributedSampler or of
        DistributedDataParallel) makes the file distributed. A sampler assigned after the loader
        is built (`loader.sampler = DistributedSampler(ds)`) is no sharding: DataLoader refuses
        `sampler` and `batch_sampler` once initialised (it raises ValueError, "sampler attribute
        should not be set after DataLoader is initialized"), so the loader keeps no sampler and
        the script stops there; the message says so, and there is no automatic fix (the
        assignment must go as well).

        A sampler picked by a test on the run's mode the wrong way round (`sampler = None if
        args.distributed else DistributedSampler(ds)`, or `if not dist.is_initialized():
        sampler = DistributedSampler(ds)`) is built only on the single-process path: the ranks
        get None (or a RandomSampler) and iterate the whole dataset. Where it runs is what
        analysis/where.py says of the test; the message names the sampler, with no automatic
        fix. A DataLoader returned by a method of a class of another project module, called on
        an object the script builds (`data = DataModule(cfg)` then `data.train_loader()`, or
        `DataModule(cfg).train_loader()`), is judged in the script as a loader from a
        top-level factory is. A DataLoader the constructor of a class builds over a dataset
        it is handed (`def __init__(self, model, train_set): self.loader = DataLoader(train_set,
        shuffle=True)`) is judged where it is built when every call in the project that
        builds the class hands it a dataset its own module makes, not split by rank
        (`Trainer(model, MyDataset(...))`).
    """,
    why="""
        Without a DistributedSampler every rank walks the entire dataset. An epoch then costs
        world_size times the data loading and compute it should, the ranks see the same batches (so
        the effective batch is smaller than you think), and adding GPUs makes epochs no shorter.
    """,
    fix="""
        Build `sampler = DistributedSampler(dataset)` (it shuffles by default; pass `shuffle=False`
        for a fixed order), pass `sampler=sampler` to the DataLoader, remove `shuffle=True` from the
        DataLoader, and call `sampler.set_epoch(epoch)` at the start of every epoch (see DDP002).
    """,
    silent="""
        - A call of another module's data helper that asks it for its datasets rather than its
          loaders (`get_data(..., return_datasets=True)`, the helper returning before it builds
          a loader when that parameter is true): the caller gets no loader from it.
        - Scripts that are not distributed.
        - Loaders handed to something that shards them for you: `accelerator.prepare(...)`,
          `fabric.setup_dataloaders(...)`, Lightning `*_dataloader` hooks (of a class that derives
          from something other than `object` and the file's own base-less classes: a plain
          `class Batches:` with a `train_dataloader()` method is the script's own) and `trainer.fit(model,
          loader)` / `validate` / `test` / `predict`, `get_train_dataloader` overrides of the HF
          `Trainer`, `ray.train.torch.prepare_data_loader(...)`.
        - IterableDatasets (their sharding is DDP009's business; also a loader built where an
          `isinstance(ds, IterableDataset)` test on its dataset holds, as in a loader factory's
          branch for streams) and datasets already split per rank
          (`Subset(ds, range(rank, n, world_size))`, `ds.shard(num_shards=..., index=rank)`,
          `split_dataset_by_node(...)`).
        - Loaders from a function the configuration's `sharded-loader-factories` names (the
          project says it returns this rank's shard: `build_sharded_loader(...)`), and the
          DataLoaders built inside such a function (README, Configuration).
        - Evaluation-only loaders: not shuffled, not named for training, and never iterated where
          the model is stepped (`backward()` / `optimizer.step()`) or handed to a training function.
          Evaluating the full set on every rank wastes time but does not change results, and a
          DistributedSampler would pad the last batch with repeated samples and skew the metric.
        - Loaders built under a rank-0 guard: only that rank iterates them.
        - Loaders built on the single-process path (`else:` of `if args.distributed:`, `if
          local_rank == -1:`, `if world_size == 1:`).
        - Code that runs in one process rather than in the ranks (analysis/where.py): the launching
          process before or after `mp.spawn(...)` (the function that spawns the workers, what only
          it calls, the `__init__` of a class only it builds); the arm beside a spawn or beside a
          call of the file's distributed entry point (`if n == 1: work(0, args) else:
          mp.spawn(work, ...)`, `if multi: main_distributed() else: main()`); code after `assert
          local_rank == -1`; test classes (`*Test`, torch's `MultiProcessTestCase` /
          `DistributedTestBase`, `unittest.TestCase`) and, in a script, classes nothing builds.
        - Loaders over a dataset handed in by a caller outside the file (a parameter no code in
          the file passes, as in a `Trainer` class): the caller may have sharded it. Unless
          the parameter is one of a top-level class's constructor and the project builds the
          class only with datasets the calling modules make themselves, none split by rank; a
          call that passes its own parameter, leaves the default or unpacks `*args` keeps the
          loader silent, and so does a class the project never builds (a library's).
        - Loaders over the dataset given to `deepspeed.initialize(training_data=...)`, which builds
          the sharded training loader itself.
        - Tests that give every rank the same made-up data on purpose: the dataset is a few
          numbers or random tensors (`TensorDataset(torch.randn(64, 10), ...)`) and the function
          that builds the loader (or one that calls it, or one it calls) asserts on results.
        - Scripts that set up tensor or pipeline model parallelism (`initialize_model_parallel`,
          `parallelize_module`): the ranks of one model-parallel group must read the same
          batches, and which ranks form a data-parallel replica is the mesh's business.
        - Loaders over a buffer this rank fills as it runs: an object's attribute that the file
          grows with `append` / `extend` / `add` / `push` / `insert` / `put` (`DataLoader(self.replay_buffer)`
          with `self.trainer.replay_buffer.append(experience)` elsewhere). Each rank trains on the
          rollouts or samples it produced itself; shuffling them locally is right.
        - A `DataLoader` subclass (of the file, or of another module of the project) whose
          `__init__` hands `super().__init__` a sampler, or that replaces `__iter__`.
        - A sampler the tool cannot see through (a `**kwargs` it cannot resolve, `*args`): it assumes
          one is there.
        - Files that pin their local rank to -1, the single-process value (`args = {"local_rank":
          -1, ...}` in a notebook), with no `--local_rank` option and no LOCAL_RANK read: the
          `torch.distributed` calls under rank tests that -1 never passes (`if args.local_rank not
          in [-1, 0]: barrier()`, copied from a launcher script) never run, so they do not make
          the file distributed.
    """,
    blind_spots="""
        - A loader built in another module (`from .data import build_loader`) is judged where it is
          built if that module is distributed by itself, else in the file that trains on it (the
          project's modules are found from its root, however the file is checked). Only top-level
          functions returning a DataLoader they build are followed, one import deep: a loader
          built by a method of a configuration object (`self.config.data.get_dataloaders()`,
          each loader a value of the dict it returns) is not, since which class that object is
          is known only at run time.
        - Whether a loader is trained on is inferred from `shuffle=True`, names (`train_loader`),
          loops in the same file that call `backward()` or `optimizer.step()`, and calls that
          hand it to a function of another project module, or to a method of a class of another
          module on an instance the file builds (`runner = Runner(...)`, then `runner.go(loader)`,
          or `Runner(...).go(loader)`), whose own loop over that parameter steps the model; or
          that hand it to the constructor of such a class (`runner = Runner(model, loader)`,
          its `__init__` keeping it as `self.batches = loader`) when a method that loops over
          that attribute and steps the model (or one of the class's methods calling it) is then
          called on the instance (`runner.go(20)`). A loader reaching such a loop through
          further calls there, or through an instance the file did not build itself (a
          factory's return value, an attribute set elsewhere), and named neutrally and not
          shuffled, goes unflagged.
        - Custom sampler classes are trusted to shard. A sampler unpacked from the tuple another
          module's function returns (`train_ds, valid_ds, sampler = get_datasets(...)`) is judged
          by what every return of that function puts there: only None or a sampler over the whole
          dataset (RandomSampler, WeightedRandomSampler) is reported; anything else (a
          DistributedSampler on some path, a project class, a value from elsewhere) is trusted,
          and so is a function that returns only None there while building no sampler at all
          (its module is not read for it).
        - A loader whose distributed placement is decided by a framework's own object (a NeMo
          data layer told to place itself on all GPUs) is not known to run in several ranks.
          Nor is a loader built in the constructor of a class in a module with no distributed
          code of its own (a data layer's `__init__` building `DataLoader(ds,
          shuffle=shuffle)`), even when a distributed script of the project builds that class
          with `shuffle=True`: the value of `shuffle` comes from the caller. A method returning
          a loader is followed only when called on an object the script builds itself (a
          name bound once to `C(...)`, or `C(...).method()`); reached through a configuration
          object (`self.config.data.get_dataloader()`) it is not, as which class that is is
          known only at run time. Unlike a missing
          `set_epoch` (DDP002), the absence of a DistributedSampler in the whole project is no
          evidence on its own: datasets sharded by hand, iterable datasets and frameworks shard
          without one.
        - A DistributedSampler / DDP subclass of another module is recognised where the script's
          text has a distributed word (its name, `Distributed...`, or another one): the screens
          that run before any parse look for those.
        - A `**kwargs` dict returned by a function of another module is read only when that
          module names something ddplint summarises (a DataLoader, a DistributedSampler, a
          process group ...); otherwise it is assumed to hold a sampler.
        - A DataLoader subclass of another module is recognised one level deep: a class of this
          file deriving from it is not a loader.
        - A sampler built only on the single-process path is recognised by a test ddplint
          reads as the run's mode (`args.distributed`, `world_size > 1`, `local_rank != -1`,
          `dist.is_initialized()`, `int(os.environ.get("WORLD_SIZE", "1")) == 1`, a variable
          assigned one of those); a test it does not read that way (a helper's answer, a
          config flag of another name) leaves the sampler counted as given to the ranks.
        - A single-process entry point is recognised by the `if` that picks it beside the
          distributed one (or a spawn); one chosen elsewhere (a command-line table of entry
          points, another module) is still checked as if every rank ran it.
        - A buffer of per-rank data is recognised only as an object's attribute that the file
          grows (`x.replay_buffer.append(...)`), by the attribute's name: a local buffer, or one
          grown in another file, is flagged when it is shuffled for training; and an attribute
          grown from a file every rank reads the same (`self.samples.append(json.loads(line))`,
          then `DataLoader(self.samples)`) is left alone.
        - A model-parallel script that also runs several data-parallel replicas and forgets
          their sampler is not reported (see the silent cases).
        - A test over made-up data that checks its results only in another file (or through a
          helper two calls away) is reported.
    """,
    triggers=(b"*DataLoader*",),
    distributed_only=True,
    check=check,
    invalid=(
        """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader, TensorDataset

        dist.init_process_group("gloo")
        dataset = TensorDataset(torch.randn(1024, 8), torch.randn(1024, 1))
        train_loader = DataLoader(dataset, batch_size=32, shuffle=True)  # <- DDP001
        """,
        """
        import os
        import torch
        from torch.utils import data

        local_rank = int(os.environ["LOCAL_RANK"])
        loader_kwargs = {"batch_size": 64, "num_workers": 2}
        loader = data.DataLoader(train_set, **loader_kwargs)  # <- DDP001
        for epoch in range(10):
            for x, y in loader:
                loss = model(x).sub(y).pow(2).mean()
                loss.backward()
                optimizer.step()
        """,
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, RandomSampler

        dist.init_process_group("nccl")
        train_loader = DataLoader(train_set, batch_size=32, sampler=RandomSampler(train_set))  # <- DDP001
        """,
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("nccl")
        train_sampler = DistributedSampler(train_set)
        train_loader = DataLoader(train_set, batch_size=32, shuffle=True)  # <- DDP001
        for epoch in range(epochs):
            train_sampler.set_epoch(epoch)
            for x, y in train_loader:
                loss_fn(model(x), y).backward()
                optimizer.step()
        """,
    ),
    valid=(
        """
        import torch
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

        dist.init_process_group("gloo")
        dataset = TensorDataset(torch.randn(1024, 8), torch.randn(1024, 1))
        sampler = DistributedSampler(dataset)
        train_loader = DataLoader(dataset, batch_size=32, sampler=sampler)
        """,
        """
        # The ImageNet example's shape: a sampler only when distributed, shuffle otherwise.
        import torch.utils.data
        import torch.distributed as dist

        if args.distributed:
            dist.init_process_group(backend="nccl")
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_set) if args.distributed else None
        train_loader = torch.utils.data.DataLoader(
            train_set, batch_size=256, shuffle=(train_sampler is None), sampler=train_sampler
        )
        val_loader = torch.utils.data.DataLoader(val_set, batch_size=256, shuffle=False)
        """,
        """
        # Accelerate shards the loader in prepare().
        from accelerate import Accelerator
        from torch.utils.data import DataLoader
        import os

        accelerator = Accelerator()
        rank = int(os.environ.get("RANK", 0))
        train_dataloader = DataLoader(train_set, shuffle=True, batch_size=16)
        model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)
        """,
        """
        # Not distributed: one process, the whole dataset is right.
        from torch.utils.data import DataLoader

        train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
        """,
        """
        # Sharded by hand: each rank keeps every world_size-th sample.
        import torch.distributed as dist
        from torch.utils.data import DataLoader, Subset

        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
        shard = Subset(train_set, range(rank, len(train_set), world))
        train_loader = DataLoader(shard, batch_size=32, shuffle=True)
        """,
        """
        # Sampler passed through a kwargs dict.
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("gloo")
        kwargs = {"batch_size": 32, "sampler": DistributedSampler(train_set)}
        train_loader = DataLoader(train_set, **kwargs)
        """,
    ),
)
