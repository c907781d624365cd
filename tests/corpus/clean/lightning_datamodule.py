"""CIFAR-10 ResNet with a LightningDataModule, trained with DDP on 2 nodes x 8 GPUs."""
import lightning.pytorch as pl
import torch
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader
from torchvision import transforms


class CIFAR10DataModule(pl.LightningDataModule):
    def __init__(self, root="./cifar", batch_size=256, workers=8):
        super().__init__()
        self.root, self.batch_size, self.workers = root, batch_size, workers
        self.train_tf = transforms.Compose([transforms.RandomCrop(32, padding=4),
                                            transforms.RandomHorizontalFlip(), transforms.ToTensor()])
        self.test_tf = transforms.ToTensor()

    def prepare_data(self):
        torchvision.datasets.CIFAR10(self.root, train=True, download=True)
        torchvision.datasets.CIFAR10(self.root, train=False, download=True)

    def setup(self, stage):
        if stage == "fit":
            self.train_ds = torchvision.datasets.CIFAR10(self.root, train=True, transform=self.train_tf)
        self.test_ds = torchvision.datasets.CIFAR10(self.root, train=False, transform=self.test_tf)

    def train_dataloader(self):
        return DataLoader(self.train_ds, batch_size=self.batch_size, shuffle=True,
                          num_workers=self.workers, pin_memory=True, persistent_workers=True)

    def val_dataloader(self):
        return DataLoader(self.test_ds, batch_size=512, shuffle=False, num_workers=self.workers)

    def test_dataloader(self):
        return DataLoader(self.test_ds, batch_size=512, num_workers=self.workers)


class ResNetClassifier(pl.LightningModule):
    def __init__(self, lr=0.1, epochs=40):
        super().__init__()
        self.save_hyperparameters()
        self.model = torchvision.models.resnet18(num_classes=10)

    def training_step(self, batch, _):
        x, y = batch
        loss = F.cross_entropy(self.model(x), y)
        self.log("loss", loss)
        return loss

    def validation_step(self, batch, _):
        x, y = batch
        self.log("val_acc", (self.model(x).argmax(1) == y).float().mean(), sync_dist=True)

    def test_step(self, batch, _):
        x, y = batch
        self.log("test_acc", (self.model(x).argmax(1) == y).float().mean(), sync_dist=True)

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9, weight_decay=5e-4)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=self.hparams.lr,
                                                    total_steps=self.trainer.estimated_stepping_batches)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def main():
    pl.seed_everything(7)
    dm = CIFAR10DataModule()
    model = ResNetClassifier()
    trainer = pl.Trainer(accelerator="gpu", devices=8, num_nodes=2, strategy="ddp",
                         max_epochs=40, precision="16-mixed")
    trainer.fit(model, datamodule=dm)
    trainer.test(model, datamodule=dm)


if __name__ == "__main__":
    main()
