import os
import dgl
import torch
import torch.distributed as dist
from dgl.dataloading import DataLoader, NeighborSampler
from sage import build_sage

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
device = torch.device("cuda", local_rank)
graph, train_nids = dgl.load_graphs("graph.bin")[0][0], torch.load("train_nids.pt")
neighbor_sampler = NeighborSampler([10, 10, 10])
train_loader = DataLoader(graph, train_nids, neighbor_sampler, device=device,
                          use_ddp=True, batch_size=1024, shuffle=True, drop_last=False)
model = torch.nn.parallel.DistributedDataParallel(build_sage().to(device), device_ids=[local_rank])
opt = torch.optim.Adam(model.parameters())
for epoch in range(20):
    train_loader.set_epoch(epoch)
    for input_nodes, output_nodes, blocks in train_loader:
        loss = torch.nn.functional.cross_entropy(model(blocks, blocks[0].srcdata["feat"]),
                                                 blocks[-1].dstdata["label"])
        opt.zero_grad()
        loss.backward()
        opt.step()
