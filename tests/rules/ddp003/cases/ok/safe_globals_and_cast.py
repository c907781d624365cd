from typing import cast

import torch
import torch.nn as nn

# allow loading old pickled checkpoints with weights_only=True
torch.serialization.add_safe_globals([nn.DataParallel, nn.Linear])
ckpt = torch.load("old_run.pt", weights_only=True)
model = cast(nn.DataParallel, ckpt["model"]).module
SUPPORTED_WRAPPERS = (nn.DataParallel, nn.parallel.DistributedDataParallel)
print(type(model).__name__, [w.__name__ for w in SUPPORTED_WRAPPERS])
