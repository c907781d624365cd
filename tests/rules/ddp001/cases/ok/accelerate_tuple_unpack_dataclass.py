from dataclasses import dataclass
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class Bundle:
    train: DataLoader
    val: DataLoader


accelerator = Accelerator(gradient_accumulation_steps=4)
ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
b = Bundle(DataLoader(ds, batch_size=16, shuffle=True), DataLoader(ds, batch_size=64))
model = torch.nn.Linear(16, 1)
opt = torch.optim.AdamW(model.parameters())
model, opt, b.train, b.val = accelerator.prepare(model, opt, b.train, b.val)
for epoch in range(3):
    for x, y in b.train:
        with accelerator.accumulate(model):
            accelerator.backward(torch.nn.functional.mse_loss(model(x), y))
            opt.step()
            opt.zero_grad()
