import sys
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

model = nn.Linear(16, 1).cuda()
match sys.argv[1]:
    case "dp":
        model = nn.DataParallel(model)  # <- DDP003
    case "ddp":
        model = DistributedDataParallel(model)
    case _:
        pass
