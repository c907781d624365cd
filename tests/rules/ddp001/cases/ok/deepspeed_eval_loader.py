import argparse
import deepspeed
import torch
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
deepspeed.init_distributed()
train_ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
eval_ds = TensorDataset(torch.randn(512, 16), torch.randn(512, 1))
model = torch.nn.Linear(16, 1)
engine, _, train_loader, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters(), training_data=train_ds)
eval_loader = DataLoader(eval_ds, batch_size=64)
for epoch in range(5):
    for x, y in train_loader:
        loss = torch.nn.functional.mse_loss(engine(x.to(engine.device)), y.to(engine.device))
        engine.backward(loss)
        engine.step()
    with torch.no_grad():
        total = sum(torch.nn.functional.mse_loss(engine(x.to(engine.device)), y.to(engine.device)).item() for x, y in eval_loader)
