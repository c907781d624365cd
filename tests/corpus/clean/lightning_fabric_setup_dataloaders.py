"""Character-level language model trained with Lightning Fabric on 4 GPUs.

Fabric swaps in a DistributedSampler (and calls set_epoch) for loaders passed
through setup_dataloaders.
"""
import lightning as L
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class CharWindows(Dataset):
    def __init__(self, text_path, seq_len=256):
        with open(text_path, encoding="utf-8") as f:
            text = f.read()
        self.vocab = sorted(set(text))
        stoi = {c: i for i, c in enumerate(self.vocab)}
        self.ids = torch.tensor([stoi[c] for c in text], dtype=torch.long)
        self.seq_len = seq_len

    def __len__(self):
        return (len(self.ids) - 1) // self.seq_len

    def __getitem__(self, i):
        s = i * self.seq_len
        chunk = self.ids[s:s + self.seq_len + 1]
        return chunk[:-1], chunk[1:]


class CharLSTM(nn.Module):
    def __init__(self, vocab_size, dim=512):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, dim)
        self.rnn = nn.LSTM(dim, dim, num_layers=2, batch_first=True)
        self.out = nn.Linear(dim, vocab_size)

    def forward(self, x):
        h, _ = self.rnn(self.emb(x))
        return self.out(h)


def main():
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="ddp", precision="bf16-mixed")
    fabric.launch()
    fabric.seed_everything(42)

    dataset = CharWindows("input.txt")
    model = CharLSTM(len(dataset.vocab))
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
    model, optimizer = fabric.setup(model, optimizer)

    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=2, drop_last=True)
    loader = fabric.setup_dataloaders(loader)

    for epoch in range(20):
        model.train()
        for step, (x, y) in enumerate(loader):
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            optimizer.zero_grad()
            fabric.backward(loss)
            fabric.clip_gradients(model, optimizer, max_norm=1.0)
            optimizer.step()
            if step % 100 == 0:
                fabric.print(f"epoch {epoch} step {step} loss {loss.item():.3f}")
        fabric.save("charlstm.ckpt", {"model": model, "optimizer": optimizer, "epoch": epoch})


if __name__ == "__main__":
    main()
