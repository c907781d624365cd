import argparse
import deepspeed
import torch
from torch.utils.data import TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

deepspeed.init_distributed()
train_set = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
model = torch.nn.Linear(16, 1)
engine, optimizer, train_loader, _ = deepspeed.initialize(
    args=args, model=model, model_parameters=model.parameters(), training_data=train_set)

for epoch in range(10):
    for x, y in train_loader:
        x, y = x.to(engine.device), y.to(engine.device)
        loss = torch.nn.functional.mse_loss(engine(x), y)
        engine.backward(loss)
        engine.step()
