import torch
from lightning.fabric import Fabric
from torch.utils.data import DataLoader, TensorDataset

fabric = Fabric(accelerator="cuda", devices=4, strategy="ddp")
fabric.launch()
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
train_loader = DataLoader(ds, batch_size=64, shuffle=True)
model = torch.nn.Linear(16, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = fabric.setup(model, optimizer)
train_loader = fabric.setup_dataloaders(train_loader)

for epoch in range(10):
    for x, y in train_loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        fabric.backward(loss)
        optimizer.step()
    if fabric.global_rank == 0:
        print(epoch, loss.item())
