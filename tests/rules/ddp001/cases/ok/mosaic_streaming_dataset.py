import os
import torch
import torch.distributed as dist
from streaming import StreamingDataset
from torch.utils.data import DataLoader

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
# StreamingDataset partitions samples across ranks and workers by itself
train_ds = StreamingDataset(remote="s3://bucket/mds/train", local="/tmp/mds", shuffle=True, batch_size=32)
train_loader = DataLoader(train_ds, batch_size=32, num_workers=8)
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.AdamW(model.parameters())
for epoch in range(3):
    for batch in train_loader:
        loss = torch.nn.functional.mse_loss(model(batch["x"].cuda()), batch["y"].cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
