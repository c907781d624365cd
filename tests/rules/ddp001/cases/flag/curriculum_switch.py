import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
easy = TensorDataset(torch.randn(2048, 8), torch.randn(2048, 1))
hard = TensorDataset(torch.randn(8192, 8), torch.randn(8192, 1))
easy_sampler = DistributedSampler(easy)
easy_loader = DataLoader(easy, batch_size=64, sampler=easy_sampler)
hard_loader = DataLoader(hard, batch_size=64, shuffle=True)  # <- DDP001
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1).cuda())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(20):
    easy_sampler.set_epoch(epoch)
    loader = easy_loader if epoch < 5 else hard_loader
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).backward()
        opt.step()
