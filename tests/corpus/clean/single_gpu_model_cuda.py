"""Sentiment classifier (bag of embeddings) on one GPU, old-school .cuda() style."""
import json
import random

import torch
import torch.nn as nn
import torch.utils.data as data

MAX_LEN = 200
EPOCHS = 8


class ReviewDataset(data.Dataset):
    def __init__(self, path, vocab):
        with open(path) as f:
            rows = [json.loads(line) for line in f]
        self.items = [([vocab.get(w, 1) for w in r["text"].lower().split()][:MAX_LEN], r["label"]) for r in rows]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


def collate(batch):
    lengths = [len(ids) for ids, _ in batch]
    out = torch.zeros(len(batch), max(lengths), dtype=torch.long)
    for i, (ids, _) in enumerate(batch):
        out[i, :len(ids)] = torch.tensor(ids)
    return out, torch.tensor([label for _, label in batch])


class BagOfEmbeddings(nn.Module):
    def __init__(self, vocab_size, dim=300):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab_size, dim, mode="mean", padding_idx=0)
        self.cls = nn.Linear(dim, 2)

    def forward(self, ids):
        return self.cls(self.emb(ids))


if __name__ == "__main__":
    random.seed(0)
    torch.manual_seed(0)
    with open("vocab.json") as f:
        vocab = json.load(f)
    train_set = ReviewDataset("train.jsonl", vocab)
    dev_set = ReviewDataset("dev.jsonl", vocab)
    train_iter = data.DataLoader(train_set, batch_size=64, shuffle=True, collate_fn=collate)
    dev_iter = data.DataLoader(dev_set, batch_size=256, collate_fn=collate)

    model = BagOfEmbeddings(len(vocab))
    model.cuda()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss().cuda()

    for epoch in range(EPOCHS):
        model.train()
        for ids, labels in train_iter:
            ids, labels = ids.cuda(), labels.cuda()
            opt.zero_grad()
            loss = loss_fn(model(ids), labels)
            loss.backward()
            opt.step()
        model.eval()
        hits = 0
        with torch.no_grad():
            for ids, labels in dev_iter:
                hits += (model(ids.cuda()).argmax(-1).cpu() == labels).sum().item()
        print("epoch", epoch, "dev acc", hits / len(dev_set))
