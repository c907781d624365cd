import os
import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, TensorDataset


class LitModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(16, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


num_nodes = int(os.environ.get("WORLD_SIZE", 1))
train_loader = DataLoader(
    TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1)),
    batch_size=64, shuffle=True, num_workers=4)
trainer = pl.Trainer(devices=8, num_nodes=num_nodes, strategy="ddp", max_epochs=3)
trainer.fit(LitModel(), train_dataloaders=train_loader)
