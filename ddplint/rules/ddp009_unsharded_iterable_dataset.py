"""DDP009 unsharded-iterable-dataset."""

from __future__ import annotations

from typing import Iterator

from ddplint.analysis.model import ModuleModel
from ddplint.rules.base import Finding, Rule, held_as


def check(model: ModuleModel) -> Iterator[Finding]:
    facts = model.facts
    data, ranks = model.data, model.ranks
    if not model.distributed and not data.streams.launches_lightning_ranks:
        return
    for loader in data.loaders:
        stream = data.unsplit_stream(loader)
        if stream is None:
            continue
        if data.is_evaluation_loader(loader):
            continue  # every rank evaluating the whole stream wastes time, it does not skew training
        if ranks.runs_on_one_rank_only(loader.site.context) or ranks.runs_single_process(loader.site.context):
            continue
        if data.handed_to_framework(loader, stream=True) or data.is_sharded_by_hand(loader):
            continue
        if data.dataset_comes_from_caller(loader):
            continue
        yield RULE.finding(
            loader.site.node,
            f"{held_as(facts, loader.site.node, 'DataLoader')} iterates `{stream}`, never split by rank: every rank reads it all",
            why=f"DataLoader iterates `{stream}`, an IterableDataset whose stream is never split by rank: "
            f"a DistributedSampler cannot shard an IterableDataset, so every rank reads and trains "
            f"on the whole stream (world_size times the work per epoch, the same batches on every "
            f"GPU); in __iter__, keep every world_size-th item from this rank "
            f"(itertools.islice(stream, rank, None, world_size), and split again by "
            f"get_worker_info() for workers), or use split_dataset_by_node / wds.split_by_node",
        )


RULE = Rule(
    code="DDP009",
    name="unsharded-iterable-dataset",
    summary="An IterableDataset that never splits its stream by rank: every rank reads all of it.",
    what="""
        In a distributed script (one that starts the process group, or that starts Lightning
        Fabric or a Trainer with a one-process-per-device strategy: `FSDPStrategy(...)`,
        `strategy="ddp"`), flags a training `DataLoader` over an IterableDataset that nothing
        splits by rank: a class of the file (or of another project module) derived from
        `torch.utils.data.IterableDataset` none of whose methods asks for the rank or the world
        size (`dist.get_rank()`, `os.environ["RANK"]`, `self.rank`, `split_by_node`,
        `islice(..., rank, None, world_size)`); splitting among the DataLoader workers alone
        (`get_worker_info()`) leaves every rank's workers reading the same items. Or a library
        stream that the file
        does not shard (`load_dataset(..., streaming=True)` without `split_dataset_by_node`,
        `wds.WebDataset(urls)` without `nodesplitter=wds.split_by_node`, an `IterableWrapper`
        without `sharding_filter()`).
    """,
    why="""
        Samplers only apply to map-style datasets: a DataLoader over an IterableDataset takes
        items in the order `__iter__` yields them, on every rank. Unless `__iter__` itself keeps
        only this rank's part, every rank trains on the entire stream: an epoch costs world_size
        times the work, gradients are averaged over identical batches, and more GPUs buy nothing.
        (Recent webdataset versions refuse to start instead.)
    """,
    fix="""
        Split in `__iter__`: `rank, world = dist.get_rank(), dist.get_world_size()`, then
        `itertools.islice(stream, rank, None, world)`; with DataLoader workers, split again by
        `torch.utils.data.get_worker_info()` (`id`, `num_workers`). For Hugging Face streaming
        datasets use `datasets.distributed.split_dataset_by_node(ds, rank, world_size)`, for
        webdataset `wds.WebDataset(urls, nodesplitter=wds.split_by_node)`.
    """,
    silent="""
        - IterableDataset classes whose methods consult the rank or world size, and streams
          built over such streams (`Batched(RankLines(path), 32)`, or a mixture handed a list
          filled with them: a class that groups, buffers, mixes or shuffles what it is handed
          yields this rank's share).
        - MosaicML `StreamingDataset` and litdata `StreamingDataset`, which partition themselves.
        - Loaders handed to Accelerate's `prepare` (it shards iterable datasets) or returned by
          a framework hook (`train_dataloader()`), evaluation loaders, loaders on rank 0 only or
          on the single-process path, datasets handed in by a caller outside the file. Lightning
          Fabric's `setup_dataloaders` and the Trainer's `fit` are not trusted here: they shard
          map-style datasets with a DistributedSampler and hand a stream back as it is.
        - Non-distributed scripts.
    """,
    blind_spots="""
        - An IterableDataset class defined in another module is judged only when the project's
          modules are analysed together (cross-module flow), else not at all.
        - Lightning does not shard IterableDatasets, but a loader returned by a framework hook
          is trusted (a `LightningDataModule` whose `train_dataloader` streams a Hugging Face
          dataset to every rank is not reported).
        - A stream whose class names a rank or world-size attribute is taken as split by rank,
          even when the value it holds is left at a default of one process.
        - A stream built by a helper of another module (`load_dataset(..., streaming=cfg.flag)`
          returned from a loader function, then mixed with `interleave_datasets`) is not known to
          be a stream in the caller; nor is one whose `streaming=` comes from configuration.
    """,
    triggers=(b"*IterableDataset*", b"*streaming*", b"*WebDataset*", b"*IterableWrapper*"),
    distributed_only=True,
    check=check,
    invalid=(
        """
        import json
        import torch.distributed as dist
        from torch.utils.data import DataLoader, IterableDataset

        class JsonlStream(IterableDataset):
            def __init__(self, path):
                self.path = path

            def __iter__(self):
                with open(self.path) as f:
                    for line in f:
                        yield json.loads(line)

        dist.init_process_group("nccl")
        train_loader = DataLoader(JsonlStream("train.jsonl"), batch_size=16)  # <- DDP009
        for batch in train_loader:
            loss = model(batch).loss
            loss.backward()
            optimizer.step()
        """,
        """
        import torch.distributed as dist
        from datasets import load_dataset
        from torch.utils.data import DataLoader

        dist.init_process_group("nccl")
        stream = load_dataset("c4", "en", split="train", streaming=True)
        train_loader = DataLoader(stream, batch_size=8)  # <- DDP009
        """,
    ),
    valid=(
        """
        import itertools, json
        import torch.distributed as dist
        from torch.utils.data import DataLoader, IterableDataset

        class JsonlStream(IterableDataset):
            def __init__(self, path):
                self.path = path

            def __iter__(self):
                rank, world = dist.get_rank(), dist.get_world_size()
                with open(self.path) as f:
                    yield from (json.loads(line) for line in itertools.islice(f, rank, None, world))

        dist.init_process_group("nccl")
        train_loader = DataLoader(JsonlStream("train.jsonl"), batch_size=16)
        """,
        """
        import torch.distributed as dist
        from datasets import load_dataset
        from datasets.distributed import split_dataset_by_node
        from torch.utils.data import DataLoader

        dist.init_process_group("nccl")
        stream = load_dataset("c4", "en", split="train", streaming=True)
        stream = split_dataset_by_node(stream, rank=dist.get_rank(), world_size=dist.get_world_size())
        train_loader = DataLoader(stream, batch_size=8)
        """,
        """
        import webdataset as wds
        import torch.distributed as dist
        from torch.utils.data import DataLoader

        dist.init_process_group("nccl")
        shards = wds.WebDataset("data/train-{000..099}.tar", nodesplitter=wds.split_by_node).decode()
        train_loader = DataLoader(shards, batch_size=None, num_workers=4)
        """,
        """
        # Accelerate shards an IterableDataset's batches across processes in prepare().
        import torch.distributed as dist
        from accelerate import Accelerator
        from torch.utils.data import DataLoader, IterableDataset

        class Lines(IterableDataset):
            def __iter__(self):
                yield from open("train.txt")

        accelerator = Accelerator()
        dist.barrier()
        train_loader = accelerator.prepare(DataLoader(Lines(), batch_size=16))
        """,
    ),
)
