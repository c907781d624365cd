"""CIFAR-10 with DeepSpeed; deepspeed.initialize builds the (distributed) train loader.

    deepspeed deepspeed_cifar_training_data.py --deepspeed --deepspeed_config ds_config.json
"""
import argparse
import os

import deepspeed
from deepspeed.accelerator import get_accelerator
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as transforms


def get_args():
    parser = argparse.ArgumentParser(description="CIFAR with DeepSpeed")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, padding=1)
        self.conv2 = nn.Conv2d(64, 128, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(128 * 8 * 8, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        return self.fc(x.flatten(1))


def main():
    args = get_args()
    deepspeed.init_distributed()
    # init_distributed does not choose the GPU (the engine does, later, in deepspeed.initialize):
    # make the rank's GPU current before the barrier below, or every rank waits on GPU 0
    get_accelerator().set_device(int(os.environ["LOCAL_RANK"]))

    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
    # rank 0 downloads first, the other ranks wait and then read the files it wrote
    if dist.get_rank() != 0:
        dist.barrier()
    trainset = torchvision.datasets.CIFAR10(root="./data", train=True, download=True, transform=tf)
    if dist.get_rank() == 0:
        dist.barrier()

    testset = torchvision.datasets.CIFAR10(root="./data", train=False, download=True, transform=tf)
    testloader = torch.utils.data.DataLoader(testset, batch_size=16, shuffle=False, num_workers=2)

    net = Net()
    parameters = filter(lambda p: p.requires_grad, net.parameters())
    model_engine, optimizer, trainloader, _ = deepspeed.initialize(
        args=args, model=net, model_parameters=parameters, training_data=trainset)

    local_device = model_engine.local_rank
    criterion = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        running = 0.0
        for i, (inputs, labels) in enumerate(trainloader):
            inputs, labels = inputs.to(local_device), labels.to(local_device)
            loss = criterion(model_engine(inputs), labels)
            model_engine.backward(loss)
            model_engine.step()
            running += loss.item()
            if i % 200 == 199 and model_engine.global_rank == 0:
                print(f"[{epoch + 1}, {i + 1}] loss: {running / 200:.3f}")
                running = 0.0
        model_engine.save_checkpoint("checkpoints", tag=f"epoch{epoch}")

    correct = total = 0
    with torch.no_grad():
        for images, labels in testloader:
            out = model_engine(images.to(local_device))
            correct += (out.argmax(1).cpu() == labels).sum().item()
            total += labels.size(0)
    print(f"rank {dist.get_rank()}: test accuracy {100 * correct / total:.2f}%")


if __name__ == "__main__":
    main()
