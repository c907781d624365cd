import os
import torch
import lightning as L
from torch.utils.data import DataLoader, TensorDataset, random_split


class DM(L.LightningDataModule):
    def setup(self, stage=None):
        full = TensorDataset(torch.randn(5000, 16), torch.randn(5000, 1))
        self.train_ds, self.val_ds = random_split(full, [4500, 500])

    def train_dataloader(self):
        return DataLoader(self.train_ds, batch_size=64, shuffle=True, num_workers=4)

    def val_dataloader(self):
        return DataLoader(self.val_ds, batch_size=256)


if __name__ == "__main__":
    print("rank", os.environ.get("LOCAL_RANK", 0))
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=10)
    trainer.fit(MyModule(), datamodule=DM())
