import os
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
root = os.environ.get("DATA_ROOT", "/data")
train_set = datasets.ImageFolder(f"{root}/imagenet/train", transforms.ToTensor())
train_loader = (
    DataLoader(  # <- DDP001
        train_set,
        batch_size=128,
        shuffle=True,
        num_workers=16,
    )
)
model = FSDP(torch.nn.Linear(3 * 224 * 224, 1000).cuda())
opt = torch.optim.AdamW(model.parameters())
for epoch in range(90):
    for images, labels in train_loader:
        loss = torch.nn.functional.cross_entropy(model(images.cuda().flatten(1)), labels.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
