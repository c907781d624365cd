"""FSDP fine-tuning of a decoder LM with torchrun; sampler reseeded every epoch."""
import functools
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import MixedPrecision, ShardingStrategy
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from torch.utils.data import DataLoader, DistributedSampler

from lm import DecoderBlock, DecoderLM, PackedTokens


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    dataset = PackedTokens("/data/tokens/train.npy", seq_len=2048)
    sampler = DistributedSampler(dataset, rank=rank, num_replicas=dist.get_world_size(), shuffle=True)
    loader = DataLoader(dataset, batch_size=4, sampler=sampler, num_workers=4, pin_memory=True)

    wrap_policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={DecoderBlock})
    model = FSDP(DecoderLM.from_pretrained("/ckpt/base-1b"), auto_wrap_policy=wrap_policy,
                 sharding_strategy=ShardingStrategy.FULL_SHARD,
                 mixed_precision=MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16),
                 device_id=torch.cuda.current_device())
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.0)

    for epoch in range(2):
        sampler.set_epoch(epoch)
        model.train()
        for step, (inputs, labels) in enumerate(loader):
            loss = model(inputs.cuda(), labels=labels.cuda()).loss
            loss.backward()
            model.clip_grad_norm_(1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if rank == 0 and step % 20 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")

    dist.barrier()
    state = model.state_dict()
    if rank == 0:
        torch.save(state, "finetuned.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
