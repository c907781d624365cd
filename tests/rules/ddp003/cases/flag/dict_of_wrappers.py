import torch.nn as nn

WRAPPERS = {"dp": lambda m: nn.DataParallel(m), "none": lambda m: m}  # <- DDP003
model = WRAPPERS["dp"](nn.Linear(4, 1).cuda())
