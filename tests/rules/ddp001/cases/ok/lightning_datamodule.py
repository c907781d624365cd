import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset


class RandomDataModule(L.LightningDataModule):
    def setup(self, stage=None):
        self.train_ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))

    def train_dataloader(self):
        return DataLoader(self.train_ds, batch_size=64, shuffle=True, num_workers=4)


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(16, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())


trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=5)
trainer.fit(Regressor(), datamodule=RandomDataModule())
