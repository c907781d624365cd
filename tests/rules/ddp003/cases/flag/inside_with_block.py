import torch
import torch.nn as nn

with torch.device("cuda"):
    net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
    net = nn.DataParallel(net)  # <- DDP003
