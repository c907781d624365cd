import os
import torch
import torch.distributed as dist
from datasets import load_dataset
from datasets.distributed import split_dataset_by_node
from torch.utils.data import DataLoader
from model_zoo import build_model

dist.init_process_group("nccl")
rank, world_size = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
stream = load_dataset("allenai/c4", "en", split="train", streaming=True)
stream = split_dataset_by_node(stream, rank=rank, world_size=world_size)
stream = stream.shuffle(seed=42, buffer_size=10_000).with_format("torch")
train_loader = DataLoader(stream, batch_size=32, num_workers=4)
model = build_model().cuda()
optimizer = torch.optim.AdamW(model.parameters())
for step, batch in enumerate(train_loader):
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
