"""DDP009 when a stream splits its files among the DataLoader workers of one process but never
among the ranks (every rank's workers read the same files), and when the loader over it is handed
to Lightning Fabric's `setup_dataloaders`, which injects a DistributedSampler for map-style
datasets only: an IterableDataset comes back unsharded."""

SCRIPT = """
import lightning as L
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


class ShardStream(IterableDataset):
    def __init__(self, files{extra_params}):
        self.files = files
{extra_fields}
    def __iter__(self):
        info = get_worker_info()
        workers = info.num_workers if info is not None else 1
        worker = info.id if info is not None else 0
{split}
        for path in mine:
            yield from read_blocks(path)


def make_loader(fabric, files):
    stream = ShardStream(files{extra_args})
    return DataLoader(stream, batch_size=8, shuffle=False)


def main():
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="fsdp")
    fabric.launch()
    loader = make_loader(fabric, list_files())
    loader = fabric.setup_dataloaders(loader)
    for batch in loader:
        fabric.backward(model(batch))
"""

WORKERS_ONLY = {
    "extra_params": "",
    "extra_fields": "",
    "split": "        mine = self.files[worker::workers]",
    "extra_args": "",
}
RANKS_AND_WORKERS = {
    "extra_params": ", num_processes=1, process_rank=0",
    "extra_fields": "        self.num_processes = num_processes\n        self.process_rank = process_rank\n",
    "split": (
        "        shards = workers * self.num_processes\n"
        "        mine = self.files[self.process_rank * workers + worker::shards]"
    ),
    "extra_args": ", num_processes=fabric.world_size, process_rank=fabric.global_rank",
}


def test_stream_split_among_workers_only_behind_fabric_is_flagged(lint):
    source = SCRIPT.format(**WORKERS_ONLY)
    assert lint(source, select=["DDP009"]) == [(20, "DDP009")]


def test_stream_split_among_ranks_and_workers_is_left_alone(lint):
    source = SCRIPT.format(**RANKS_AND_WORKERS)
    assert lint(source, select=["DDP009"]) == []


def test_stream_split_among_workers_only_handed_to_accelerate_is_left_alone(lint):
    """Accelerate's `prepare` shards an iterable dataset across processes itself."""
    source = """
    from accelerate import Accelerator
    from torch.utils.data import DataLoader, IterableDataset, get_worker_info

    class ShardStream(IterableDataset):
        def __init__(self, files):
            self.files = files

        def __iter__(self):
            info = get_worker_info()
            for path in self.files[info.id::info.num_workers]:
                yield from read_blocks(path)

    accelerator = Accelerator()
    loader = DataLoader(ShardStream(list_files()), batch_size=8)
    model, loader = accelerator.prepare(model, loader)
    """
    assert lint(source, select=["DDP009"]) == []



MIXTURE = """
import torch.distributed as dist
from torch.utils.data import DataLoader, IterableDataset


class Part(IterableDataset):
    def __init__(self, files, rank=0, world=1):
        self.files, self.rank, self.world = files, rank, world

    def __iter__(self):
        for path in self.files[self.rank::self.world]:
            yield from read_blocks(path)


class Whole(IterableDataset):
    def __init__(self, files):
        self.files = files

    def __iter__(self):
        for path in self.files:
            yield from read_blocks(path)


class Mixture(IterableDataset):
    def __init__(self, parts, weights):
        self.parts, self.weights = parts, weights

    def __iter__(self):
        streams = [iter(part) for part in self.parts]
        while True:
            yield next(pick(streams, self.weights))


def main(corpora):
    dist.init_process_group("nccl")
    parts = []
    for files in corpora:
        part = {part}
        parts.append(part)
    loader = DataLoader(Mixture(parts, weights=None), batch_size=8)
    for batch in loader:
        step(batch)
"""


def test_mixture_over_a_list_of_unsplit_streams_is_flagged(lint):
    source = MIXTURE.format(part="Whole(files)")
    assert lint(source, select=["DDP009"]) == [(39, "DDP009")]


def test_mixture_over_a_list_of_streams_split_by_rank_is_left_alone(lint):
    """Each part the list is filled with keeps only this rank's files: so does the mixture."""
    source = MIXTURE.format(part="Part(files, dist.get_rank(), dist.get_world_size())")
    assert lint(source, select=["DDP009"]) == []


TRAINER = """
import lightning as L
from torch.utils.data import DataLoader, IterableDataset


class Lines(IterableDataset):
    def __init__(self, path):
        self.path = path

    def __iter__(self):
        with open(self.path) as handle:
            yield from handle


def main(module):
    trainer = L.Trainer(accelerator="gpu", {options})
    loader = DataLoader(Lines("train.txt"), batch_size=8)
    trainer.fit(module, train_dataloaders=loader)
"""


def test_unsplit_stream_given_to_a_ddp_trainer_is_flagged(lint):
    """`fit` adds a DistributedSampler to map-style loaders only: the stream reaches every rank whole."""
    source = TRAINER.format(options='devices=8, strategy="ddp"')
    assert lint(source, select=["DDP009"]) == [(16, "DDP009")]


def test_unsplit_stream_given_to_a_trainer_without_a_multi_process_strategy_is_left_alone(lint):
    """Nothing in the file says it runs on several ranks."""
    source = TRAINER.format(options="devices=1")
    assert lint(source, select=["DDP009"]) == []
