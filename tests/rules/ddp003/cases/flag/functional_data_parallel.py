import torch
from torch.nn.parallel import data_parallel

model = torch.nn.Linear(16, 1).cuda()
x = torch.randn(256, 16).cuda()
out = data_parallel(model, x, device_ids=[0, 1, 2, 3])  # <- DDP003
