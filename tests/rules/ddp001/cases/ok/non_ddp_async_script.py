import asyncio
import torch
from torch.utils.data import DataLoader, TensorDataset


async def main():
    ds = TensorDataset(torch.randn(2048, 8), torch.randn(2048, 1))
    loader = DataLoader(ds, batch_size=32, shuffle=True)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(5):
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        await asyncio.sleep(0)

asyncio.run(main())
