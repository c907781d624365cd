import os
import torch
import torch.distributed as dist
from datasets import load_dataset
from torch.utils.data import DataLoader

dist.init_process_group("nccl")
rank = dist.get_rank()
world_size = dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
ds = load_dataset("imdb", split="train")
ds = ds.shard(world_size, rank, contiguous=True).with_format("torch")
train_loader = DataLoader(ds, batch_size=32, shuffle=True)
model = torch.nn.EmbeddingBag(30000, 2).cuda()
opt = torch.optim.Adam(model.parameters())
for epoch in range(3):
    for batch in train_loader:
        loss = torch.nn.functional.cross_entropy(model(batch["input_ids"].cuda()), batch["label"].cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
