"""MosaicML Composer does not add a DistributedSampler to a plain DataLoader: the loader must
bring its own (composer.utils.dist.get_sampler), so a shuffled loader without one is a bug."""

import torch
import torch.distributed as dist
from composer import Trainer
from torch.utils.data import DataLoader


def main(model, train_set, eval_set):
    dist.init_process_group("nccl")
    train_dataloader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8)  # <- DDP001
    eval_dataloader = DataLoader(eval_set, batch_size=128)
    trainer = Trainer(
        model=model,
        train_dataloader=train_dataloader,
        eval_dataloader=eval_dataloader,
        max_duration="10ep",
        optimizers=torch.optim.AdamW(model.parameters()),
    )
    trainer.fit()
