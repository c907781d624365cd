"""Ray Train: the worker function builds a plain DataLoader and hands it to
ray.train.torch.prepare_data_loader, which adds the DistributedSampler."""
import os
import tempfile

import ray.train
import ray.train.torch
import torch
from ray.train import Checkpoint, ScalingConfig
from ray.train.torch import TorchTrainer
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def train_func(config):
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
    train_data = datasets.FashionMNIST(root="/mnt/shared/fmnist", train=True, download=False, transform=tf)
    train_loader = DataLoader(train_data, batch_size=config["batch_size"], shuffle=True)
    train_loader = ray.train.torch.prepare_data_loader(train_loader)

    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10))
    model = ray.train.torch.prepare_model(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"], momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(config["epochs"]):
        if ray.train.get_context().get_world_size() > 1:
            train_loader.sampler.set_epoch(epoch)
        for images, labels in train_loader:
            loss = loss_fn(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        with tempfile.TemporaryDirectory() as tmp:
            checkpoint = None
            if ray.train.get_context().get_world_rank() == 0:
                torch.save(model.module.state_dict(), os.path.join(tmp, "model.pt"))
                checkpoint = Checkpoint.from_directory(tmp)
            ray.train.report({"loss": loss.item(), "epoch": epoch}, checkpoint=checkpoint)


if __name__ == "__main__":
    trainer = TorchTrainer(train_func,
                           train_loop_config={"batch_size": 128, "lr": 0.01, "epochs": 10},
                           scaling_config=ScalingConfig(num_workers=4, use_gpu=True))
    result = trainer.fit()
    print(result.metrics)
