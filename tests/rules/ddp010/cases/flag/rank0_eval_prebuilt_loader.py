import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.tensorboard import SummaryWriter

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
val_loader = DataLoader(TensorDataset(torch.randn(512, 16), torch.randn(512, 1)), batch_size=128)
model = torch.nn.Linear(16, 1).cuda()
writer = SummaryWriter("runs") if rank == 0 else None
for epoch in range(10):
    if rank == 0:  # <- DDP010
        with torch.no_grad():
            val_loss = sum(torch.nn.functional.mse_loss(model(x.cuda()), y.cuda()).item() for x, y in val_loader)
        writer.add_scalar("val/loss", val_loss, epoch)
    dist.barrier()
