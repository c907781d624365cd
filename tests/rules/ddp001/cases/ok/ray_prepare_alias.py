import torch
from ray.train import ScalingConfig
from ray.train.torch import TorchTrainer
from ray.train.torch import prepare_data_loader as shard_loader, prepare_model
from torch.utils.data import DataLoader, TensorDataset


def train_func(config):
    ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
    loader = DataLoader(ds, batch_size=config["batch_size"], shuffle=True)
    loader = shard_loader(loader)
    model = prepare_model(torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(config["epochs"]):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()


trainer = TorchTrainer(train_func, train_loop_config={"batch_size": 64, "epochs": 5},
                       scaling_config=ScalingConfig(num_workers=4, use_gpu=True))
trainer.fit()
