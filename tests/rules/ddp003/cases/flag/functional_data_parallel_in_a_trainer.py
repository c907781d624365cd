import torch


class Trainer:
    def __init__(self, model, loader, optimizer, gpuid):
        self.model, self.loader, self.optimizer, self.gpuid = model, loader, optimizer, gpuid

    def train(self):
        for mix, ref in self.loader:
            self.optimizer.zero_grad()
            out = torch.nn.parallel.data_parallel(self.model, mix, device_ids=self.gpuid)  # <- DDP003
            torch.nn.functional.mse_loss(out, ref).backward()
            self.optimizer.step()
