import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from tqdm import tqdm

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
train_dataloader = DataLoader(ds, batch_size=64, sampler=DistributedSampler(ds))
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):  # <- DDP002
    pbar = tqdm(train_dataloader, disable=dist.get_rank() != 0, desc=f"epoch {epoch}")
    for step, (x, y) in enumerate(pbar):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
