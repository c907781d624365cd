"""DDP002 on PyG's graph DataLoader: a torch DataLoader subclass that hands `sampler=` to torch
unchanged, so a shuffling DistributedSampler given to it needs set_epoch like any other."""

GRAPH_TRAINING = """
import torch.distributed as dist
from torch.utils.data.distributed import DistributedSampler
from torch_geometric.loader import DataLoader


def worker(rank, world, graphs, model, step):
    dist.init_process_group("nccl", rank=rank, world_size=world)
    order = DistributedSampler(graphs, num_replicas=world, rank=rank)
    batches = DataLoader(graphs, batch_size=64, sampler=order)
    for epoch in range(20):
{set_epoch}        for batch in batches:
            step(model, batch)
"""


def test_graph_loader_without_set_epoch_is_flagged(lint):
    assert lint(GRAPH_TRAINING.format(set_epoch=""), select=["DDP002"]) == [(10, "DDP002")]


def test_graph_loader_with_set_epoch_is_left_alone(lint):
    source = GRAPH_TRAINING.format(set_epoch="        order.set_epoch(epoch)\n")
    assert lint(source, select=["DDP002"]) == []


def test_older_import_path_of_the_graph_loader_is_flagged(lint):
    source = GRAPH_TRAINING.format(set_epoch="").replace("torch_geometric.loader", "torch_geometric.data")
    assert lint(source, select=["DDP002"]) == [(10, "DDP002")]


def test_graph_loader_of_an_unsharded_sampler_is_left_alone(lint):
    """shuffle=False: the order never changes, so there is no epoch to give."""
    source = GRAPH_TRAINING.format(set_epoch="").replace("rank=rank)", "rank=rank, shuffle=False)")
    assert lint(source, select=["DDP002"]) == []
