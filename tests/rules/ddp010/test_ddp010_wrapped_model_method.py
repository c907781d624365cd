"""DDP010: rank 0 calls a method of the model class through the DDP wrapper's `.module`
(`model.module.layerwise(...)`), and that method loops over a loader with the model frozen."""

from __future__ import annotations

SCRIPT = """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

class Net(torch.nn.Module):
    def forward(self, x):
        return self.body(x)

    @torch.no_grad()
    def layerwise(self, loader):
        outs = []
        for batch in loader:
            outs.append(self.body(batch.x).cpu())
        return torch.cat(outs)

    def describe(self):
        return sum(p.numel() for p in self.parameters())

def run(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    model = Net().to(rank)
    model = DistributedDataParallel(model, device_ids=[rank])
    for epoch in range(epochs):
        for batch in train_loader:
            model(batch.x).sum().backward()
            optimizer.step()
        if rank == 0:
            print(model.module.{method})
        dist.barrier()
"""


def test_rank_zero_pass_through_the_wrapped_models_method_is_flagged(lint):
    assert lint(SCRIPT.replace("{method}", "layerwise(full_loader)"), select=["DDP010"]) == [(27, "DDP010")]


def test_rank_zero_call_of_a_method_that_passes_over_no_data_is_left_alone(lint):
    assert lint(SCRIPT.replace("{method}", "describe()"), select=["DDP010"]) == []


def test_a_method_of_another_class_is_not_taken_for_it(lint):
    # `helper` is built from a class the file does not define: nothing says its method is Net's
    source = SCRIPT.replace("{method}", "layerwise(full_loader)").replace(
        "model = Net().to(rank)", "model = make_net().to(rank)"
    )
    assert lint(source, select=["DDP010"]) == []
