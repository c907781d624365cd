import torch
import lightning as L
from torch.utils.data import DataLoader, TensorDataset

fabric = L.Fabric(accelerator="cuda", devices=8, strategy="ddp")
fabric.launch()
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
train_loader, val_loader = fabric.setup_dataloaders(
    DataLoader(ds, batch_size=64, shuffle=True),
    DataLoader(ds, batch_size=256),
)
model, opt = fabric.setup(torch.nn.Linear(16, 1), torch.optim.SGD)
for epoch in range(5):
    for x, y in train_loader:
        opt.zero_grad()
        fabric.backward(torch.nn.functional.mse_loss(model(x), y))
        opt.step()
