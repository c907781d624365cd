import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

accelerator = Accelerator()
train_ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
val_ds = TensorDataset(torch.randn(512, 16), torch.randn(512, 1))
loaders = [
    DataLoader(train_ds, batch_size=64, shuffle=True),
    DataLoader(val_ds, batch_size=64),
]
model = torch.nn.Linear(16, 1)
optimizer = torch.optim.AdamW(model.parameters())
model, optimizer, *loaders = accelerator.prepare(model, optimizer, *loaders)
train_loader, val_loader = loaders

for epoch in range(3):
    model.train()
    for x, y in train_loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
