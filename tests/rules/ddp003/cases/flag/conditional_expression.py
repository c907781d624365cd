import torch
import torch.nn as nn

n_gpus = torch.cuda.device_count()
model = nn.Sequential(nn.Linear(512, 512), nn.GELU(), nn.Linear(512, 10)).cuda()
model = nn.DataParallel(model) if n_gpus > 1 else model  # <- DDP003
opt = torch.optim.Adam(model.parameters())
for step in range(100):
    loss = model(torch.randn(256, 512).cuda()).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
