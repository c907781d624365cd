import torch
from torch.nn import *

model = Sequential(Linear(512, 256), ReLU(), Linear(256, 10))
if torch.cuda.device_count() > 1:
    model = DataParallel(model)  # <- DDP003
model = model.cuda()
out = model(torch.randn(64, 512).cuda())
