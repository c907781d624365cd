"""MNIST classifier as a LightningModule that owns its dataloaders; Lightning
injects the DistributedSampler itself when strategy="ddp"."""
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, random_split
from torchvision import transforms
from torchvision.datasets import MNIST


class LitMNIST(pl.LightningModule):
    def __init__(self, data_dir="./data", batch_size=128, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 256), nn.ReLU(),
                                 nn.Dropout(0.1), nn.Linear(256, 10))
        self.tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])

    def forward(self, x):
        return self.net(x)

    def prepare_data(self):
        MNIST(self.hparams.data_dir, train=True, download=True)
        MNIST(self.hparams.data_dir, train=False, download=True)

    def setup(self, stage=None):
        full = MNIST(self.hparams.data_dir, train=True, transform=self.tf)
        self.mnist_train, self.mnist_val = random_split(full, [55000, 5000],
                                                        generator=torch.Generator().manual_seed(0))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        acc = (self(x).argmax(1) == y).float().mean()
        self.log("val_acc", acc, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)

    def train_dataloader(self):
        return DataLoader(self.mnist_train, batch_size=self.hparams.batch_size, shuffle=True, num_workers=4)

    def val_dataloader(self):
        return DataLoader(self.mnist_val, batch_size=256, num_workers=4)


if __name__ == "__main__":
    model = LitMNIST()
    pl.Trainer(strategy="ddp", accelerator="gpu", devices=4, max_epochs=10).fit(model)
