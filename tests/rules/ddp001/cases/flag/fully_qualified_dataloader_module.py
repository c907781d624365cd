import os
import torch
import torch.distributed as dist
import torch.utils.data

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
ds = torch.utils.data.TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
train_loader = torch.utils.data.dataloader.DataLoader(ds, batch_size=64, shuffle=True)  # <- DDP001
model = torch.nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
