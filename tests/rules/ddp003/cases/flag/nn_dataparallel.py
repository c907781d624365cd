"""Multi-GPU single-process training with nn.DataParallel (one process drives all
GPUs through the GIL and scatters every batch from cuda:0)."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="/data/cub200")
    parser.add_argument("--epochs", type=int, default=60)
    args = parser.parse_args()

    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor()])
    train_set = datasets.ImageFolder(f"{args.data}/train", transform=tf)
    train_loader = DataLoader(train_set, batch_size=256, shuffle=True, num_workers=16, pin_memory=True)

    model = models.resnet50(weights="IMAGENET1K_V2")
    model.fc = nn.Linear(model.fc.in_features, len(train_set.classes))
    if torch.cuda.device_count() > 1:
        print(f"using {torch.cuda.device_count()} GPUs")
        model = nn.DataParallel(model)  # <- DDP003
    model = model.cuda()

    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        model.train()
        for images, labels in train_loader:
            images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")

    to_save = model.module if isinstance(model, nn.DataParallel) else model
    torch.save(to_save.state_dict(), "cub_resnet50.pt")


if __name__ == "__main__":
    main()
