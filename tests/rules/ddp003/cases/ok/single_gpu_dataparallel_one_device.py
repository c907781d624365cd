"""A single-GPU script that still wraps the model in nn.DataParallel with one device
id: DataParallel over one device calls the module directly, nothing is scattered."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from tsdata import ElectricityWindows
from tsmodels import TemporalConvNet

parser = argparse.ArgumentParser()
parser.add_argument("--csv", default="/data/electricity.csv")
parser.add_argument("--epochs", type=int, default=80)
parser.add_argument("--patience", type=int, default=10)
args = parser.parse_args()

device = torch.device("cuda:0")

train_ds = ElectricityWindows(args.csv, split="train", window=168, horizon=24)
val_ds = ElectricityWindows(args.csv, split="val", window=168, horizon=24)
train_loader = DataLoader(train_ds, batch_size=128, shuffle=True)
val_loader = DataLoader(val_ds, batch_size=512)

model = TemporalConvNet(n_inputs=321, channels=[64, 64, 64, 64], horizon=24)
model = nn.DataParallel(model, device_ids=[0])
model.to(device)

optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.MSELoss()
best, bad_epochs = float("inf"), 0
for epoch in range(args.epochs):
    model.train()
    for x, y in train_loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        val = sum(criterion(model(x.to(device)), y.to(device)).item() for x, y in val_loader) / len(val_loader)
    print(f"epoch {epoch}: val mse {val:.5f}")
    if val < best:
        best, bad_epochs = val, 0
        torch.save(model.state_dict(), "tcn_best.pt")
    else:
        bad_epochs += 1
        if bad_epochs >= args.patience:
            print("early stopping")
            break
