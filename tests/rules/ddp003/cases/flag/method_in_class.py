import torch
from torch import nn


class Experiment:
    def __init__(self, cfg):
        self.cfg = cfg
        self.model = nn.Linear(cfg["in"], cfg["out"])

    def setup_devices(self):
        self.model = self.model.cuda()
        if self.cfg.get("multi_gpu", True):
            self.model = nn.DataParallel(self.model)  # <- DDP003
        return self


exp = Experiment({"in": 16, "out": 4}).setup_devices()
