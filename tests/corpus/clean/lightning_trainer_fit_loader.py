"""Tabular regression with Lightning; the loaders are handed straight to trainer.fit."""
import argparse

import numpy as np
import pytorch_lightning as pl
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Regressor(pl.LightningModule):
    def __init__(self, n_features, hidden=256, lr=3e-4):
        super().__init__()
        self.save_hyperparameters()
        self.mlp = nn.Sequential(nn.Linear(n_features, hidden), nn.GELU(),
                                 nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.mlp(x).squeeze(-1), y)
        self.log("train_mse", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_mse", nn.functional.mse_loss(self.mlp(x).squeeze(-1), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


def load_split(path):
    arr = np.load(path)
    x = torch.from_numpy(arr["x"]).float()
    y = torch.from_numpy(arr["y"]).float()
    return TensorDataset(x, y)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", default="train.npz")
    parser.add_argument("--val", default="val.npz")
    parser.add_argument("--gpus", type=int, default=4)
    args = parser.parse_args()

    train_ds = load_split(args.train)
    val_ds = load_split(args.val)
    model = Regressor(n_features=train_ds.tensors[0].shape[1])
    val_loader = DataLoader(val_ds, batch_size=1024, num_workers=2)

    trainer = pl.Trainer(accelerator="gpu", devices=args.gpus, strategy="ddp", max_epochs=50,
                         log_every_n_steps=20)
    trainer.fit(model, DataLoader(train_ds, batch_size=512, shuffle=True, num_workers=4), val_loader)
