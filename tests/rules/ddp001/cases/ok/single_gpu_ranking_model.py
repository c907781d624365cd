"""Train a pairwise learning-to-rank model on one GPU."""
import torch
from torch.utils.data import DataLoader, TensorDataset

queries = torch.randn(10000, 64)
rank = torch.randint(0, 50, (10000,)).float()  # relevance rank of the clicked doc
train_loader = DataLoader(TensorDataset(queries, rank), batch_size=256, shuffle=True)
scorer = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 1)).cuda()
opt = torch.optim.Adam(scorer.parameters(), lr=1e-3)
for epoch in range(20):
    for q, r in train_loader:
        world_size_penalty = 0.0
        loss = torch.nn.functional.mse_loss(scorer(q.cuda()).squeeze(1), r.cuda()) + world_size_penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
