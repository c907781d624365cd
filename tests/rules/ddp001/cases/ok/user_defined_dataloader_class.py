import os
import numpy as np
import torch
import torch.distributed as dist


class DataLoader:
    """Memory-mapped token loader: each rank reads its own slice of the file."""

    def __init__(self, path, batch_size, seq_len, rank, world_size):
        self.tokens = np.memmap(path, dtype=np.uint16, mode="r")
        self.B, self.T = batch_size, seq_len
        self.pos = rank * batch_size * seq_len
        self.stride = world_size * batch_size * seq_len

    def next_batch(self):
        buf = torch.from_numpy(self.tokens[self.pos:self.pos + self.B * self.T + 1].astype(np.int64))
        self.pos += self.stride
        return buf[:-1].view(self.B, self.T), buf[1:].view(self.B, self.T)


dist.init_process_group("nccl"); torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
train_loader = DataLoader("train.bin", batch_size=16, seq_len=1024, rank=rank, world_size=world_size)
model = torch.nn.Embedding(50304, 50304).cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(1000):
    x, y = train_loader.next_batch()
    loss = torch.nn.functional.cross_entropy(model(x.cuda()).flatten(0, 1), y.cuda().flatten())
    loss.backward()
    opt.step()
    opt.zero_grad()
