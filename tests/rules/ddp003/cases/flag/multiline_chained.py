import torch
import torch.nn as nn

net = nn.Linear(1024, 1024)
model = (
    nn.DataParallel(  # <- DDP003
        net,
        device_ids=[0, 1],
    )
    .to("cuda:0")
)
print(model(torch.randn(4, 1024, device="cuda:0")).shape)
