import torch
from torch.utils.data import DataLoader, TensorDataset
import horovod.torch as hvd

hvd.init()
torch.cuda.set_device(hvd.local_rank())
dataset = TensorDataset(torch.randn(100, 5), torch.randn(100, 1))
loader = DataLoader(dataset, batch_size=30, shuffle=True)   # <- DDP001
model = torch.nn.Linear(5, 1).cuda()
opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                               named_parameters=model.named_parameters())
hvd.broadcast_parameters(model.state_dict(), root_rank=0)
for epoch in range(10):
    for x, y in loader:
        opt.zero_grad()
        ((model(x.cuda()) - y.cuda()) ** 2).mean().backward()
        opt.step()
