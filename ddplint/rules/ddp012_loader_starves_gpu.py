"""DDP012 loader-starves-gpu."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from ddplint.analysis.distributed import is_test_code
from ddplint.analysis.facts import LoopSite
from ddplint.analysis.loaders import LoaderInfo
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.syntax import argument, double_star_args, has_star_args, int_value, is_false, is_true, keyword_arg
from ddplint.analysis.torch_api import DATALOADER_POSITIONS, PLACEMENT_METHODS
from ddplint.rules.base import Finding, Rule, held_as


def check(model: ModuleModel) -> Iterator[Finding]:
    facts = model.facts
    if not model.devices.uses_gpu or is_test_code(facts):
        return  # a test's loaders feed a few batches to check behaviour, not a GPU for hours
    data = model.data
    for loader in data.loaders:
        call = loader.site.node
        if loader.built_in is not None or has_star_args(call) or double_star_args(call):
            continue  # built in another module (judged there), or the settings may be in **kwargs
        if not data.is_training_loader(loader):
            continue
        if _in_memory_tensors(model, loader):
            continue  # indexing tensors already in memory: worker processes would only add IPC
        problems, short = [], []
        workers = argument(call, "num_workers", DATALOADER_POSITIONS["num_workers"])
        if workers is None or int_value(workers) == 0:
            problems.append(
                "loads and collates every batch in the training process (num_workers is "
                f"{'not set' if workers is None else '0'}), so the GPU waits for each batch while "
                "the CPU prepares it; set num_workers (4-8 per GPU is a common start, or "
                "os.cpu_count() // GPUs per node) and persistent_workers=True"
            )
            short.append(f"num_workers is {'not set' if workers is None else '0'}")
        pin = argument(call, "pin_memory", DATALOADER_POSITIONS["pin_memory"])
        if (pin is None or is_false(pin)) and _copied_non_blocking(model, loader):
            problems.append(
                "copies its batches with non_blocking=True but does not pin them: a copy from "
                "pageable memory is synchronous anyway, so the transfer still stalls the GPU; "
                "pass pin_memory=True"
            )
            short.append("non_blocking copies are not pinned")
        if problems:
            named = held_as(facts, call, "training DataLoader")
            why = "training DataLoader " + "; it also ".join(problems)
            yield RULE.finding(call, f"{named} starves the GPU: " + " and ".join(short), why=why)


def _in_memory_tensors(model: ModuleModel, loader: LoaderInfo) -> bool:
    facts = model.facts
    if loader.dataset is None:
        return False
    sources = model.data.flow.sources(loader.dataset, loader.site.context.scope)
    return bool(sources) and all(
        isinstance(source.node, cst.Call)
        and "torch.utils.data.TensorDataset" in facts.qualified_names(source.node.func)
        for source in sources
    )


def _copied_non_blocking(model: ModuleModel, loader: LoaderInfo) -> bool:
    """Some `.to(..., non_blocking=True)` / `.cuda(non_blocking=True)` in a loop over the loader."""
    facts = model.facts
    for iteration in model.data.iterations(loader):
        where = iteration.where
        if not isinstance(where, LoopSite):
            continue
        for site in facts.calls:
            if not any(loop is where for loop in site.context.loops):
                continue
            flag = keyword_arg(site.node, "non_blocking")
            if site.name in PLACEMENT_METHODS and flag is not None and is_true(flag.value):
                return True
    return False


RULE = Rule(
    code="DDP012",
    name="loader-starves-gpu",
    summary="(opt-in) A training DataLoader with no worker processes, or unpinned non_blocking copies, in a GPU script.",
    what="""
        In a script that uses CUDA, flags a training `DataLoader` whose `num_workers` is missing or
        a literal 0, or which is iterated in a loop that copies batches with `non_blocking=True`
        while `pin_memory` is missing or False.
    """,
    why="""
        With `num_workers=0` the training process itself reads, decodes, augments and collates
        every batch, and the GPU sits idle while it does: in image and audio pipelines that is
        often most of the step. Every rank pays it, so adding GPUs does not help. A
        `non_blocking=True` copy overlaps with compute only from pinned (page-locked) memory;
        from ordinary memory it is synchronous.
    """,
    fix="""
        `DataLoader(..., num_workers=8, pin_memory=True, persistent_workers=True)`, with
        num_workers sized to the CPU cores per GPU. `ddplint verify` can confirm the finding by
        measuring how long each step waits for its batch.
    """,
    silent="""
        - `num_workers` / `pin_memory` from a variable or config (`num_workers=args.workers`),
          or through `**loader_kwargs` / `*args`.
        - Evaluation loaders, scripts that never mention CUDA.
        - Test code (`unittest.TestCase` classes, pytest / unittest test functions).
        - Loaders over a `TensorDataset` (tensors already in memory: workers would only add
          inter-process copies).
        - Off by default: enable with `--select DDP012`.
    """,
    blind_spots="""
        - Small in-memory datasets other than `TensorDataset` gain nothing from workers but are
          flagged all the same.
        - Loaders handed to a framework that changes their settings are judged as written.
    """,
    triggers=(b"DataLoader",),
    distributed_only=False,
    check=check,
    invalid=(
        """
        import torch
        from torch.utils.data import DataLoader

        device = torch.device("cuda")
        train_loader = DataLoader(train_set, batch_size=64, shuffle=True)  # <- DDP012
        for x, y in train_loader:
            loss = model(x.to(device)).sub(y.to(device)).pow(2).mean()
            loss.backward()
            optimizer.step()
        """,
        """
        import torch
        from torch.utils.data import DataLoader

        train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8)  # <- DDP012
        for x, y in train_loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        """,
    ),
    valid=(
        """
        import torch
        from torch.utils.data import DataLoader

        train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8, pin_memory=True)
        for x, y in train_loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        """,
        """
        import torch
        from torch.utils.data import DataLoader

        train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=args.workers)
        model = model.cuda()
        """,
        """
        # CPU only: nothing to starve.
        from torch.utils.data import DataLoader

        train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
        """,
    ),
)
