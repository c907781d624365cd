import enum
import torch
import torch.nn as nn


class Mode(enum.Enum):
    DataParallel = "dp"
    Single = "single"


mode = Mode.DataParallel if torch.cuda.device_count() > 1 else Mode.Single
model = nn.Linear(64, 8).cuda()
if mode is Mode.DataParallel:
    model = nn.DataParallel(model)  # <- DDP003
