import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.utils.data import DataLoader, TensorDataset

# single-process run; the process group only exists so torch.distributed.checkpoint works
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29511", rank=0, world_size=1)
train_loader = DataLoader(TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1)),
                          batch_size=64, shuffle=True)
model = torch.nn.Linear(16, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
dcp.save({"model": model.state_dict()}, checkpoint_id="ckpt")
