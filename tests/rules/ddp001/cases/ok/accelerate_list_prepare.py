import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

accelerator = Accelerator()
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
loaders = [DataLoader(ds, batch_size=64, shuffle=True), DataLoader(ds, batch_size=128)]
model = torch.nn.Linear(16, 1)
opt = torch.optim.AdamW(model.parameters())
model, opt, *loaders = accelerator.prepare(model, opt, *loaders)
train_loader, eval_loader = loaders
for epoch in range(3):
    for x, y in train_loader:
        opt.zero_grad()
        accelerator.backward(torch.nn.functional.mse_loss(model(x), y))
        opt.step()
