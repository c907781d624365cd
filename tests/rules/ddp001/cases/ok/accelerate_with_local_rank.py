import os
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

local_rank = int(os.environ.get("LOCAL_RANK", 0))
accelerator = Accelerator()
train_ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
train_dataloader = DataLoader(train_ds, batch_size=64, shuffle=True, num_workers=4)
model = torch.nn.Linear(16, 1)
optimizer = torch.optim.AdamW(model.parameters())
model, optimizer = accelerator.prepare(model, optimizer)
train_dataloader = accelerator.prepare_data_loader(train_dataloader)

for epoch in range(3):
    for x, y in train_dataloader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    if local_rank == 0:
        print(f"epoch {epoch} loss {loss.item():.4f}")
