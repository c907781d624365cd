import torch
import torch.nn as nn

gpu_ids = [0, 1, 2, 3]
wrap = lambda m: nn.DataParallel(m, device_ids=gpu_ids, output_device=gpu_ids[0])  # <- DDP003
encoder = wrap(nn.Linear(128, 64).cuda())
decoder = wrap(nn.Linear(64, 128).cuda())
x = torch.randn(32, 128).cuda()
loss = (decoder(encoder(x)) - x).pow(2).mean()
loss.backward()
