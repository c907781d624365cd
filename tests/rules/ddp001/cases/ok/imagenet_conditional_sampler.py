import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
if distributed:
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))

train_dataset = TensorDataset(torch.randn(4096, 16), torch.randint(0, 10, (4096,)))
train_sampler = DistributedSampler(train_dataset) if distributed else None
train_loader = DataLoader(
    train_dataset, batch_size=256, shuffle=(train_sampler is None),
    num_workers=8, pin_memory=True, sampler=train_sampler)

model = torch.nn.Linear(16, 10).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(90):
    if distributed:
        train_sampler.set_epoch(epoch)
    for images, target in train_loader:
        loss = torch.nn.functional.cross_entropy(model(images.cuda()), target.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
