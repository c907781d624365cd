"""Seq2seq DDP training; vocabulary building and encoding run only where
is_main_process() is true, and the encoded corpus is then broadcast."""
import os
from collections import Counter

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from nmt import PairDataset, Transformer, collate_pairs, read_parallel_corpus


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def build_vocab(sentences, min_freq=3):
    counts = Counter(tok for s in sentences for tok in s.split())
    itos = ["<pad>", "<unk>", "<s>", "</s>"] + sorted(t for t, c in counts.items() if c >= min_freq)
    return {t: i for i, t in enumerate(itos)}


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    if is_main_process():  # <- DDP004
        src, tgt = read_parallel_corpus("/data/wmt14/train.de", "/data/wmt14/train.en")
        src_vocab, tgt_vocab = build_vocab(src), build_vocab(tgt)
        pairs = [([src_vocab.get(t, 1) for t in s.split()], [tgt_vocab.get(t, 1) for t in t_.split()])
                 for s, t_ in zip(src, tgt)]
        shared = [src_vocab, tgt_vocab, pairs]
    else:
        shared = [None, None, None]
    dist.broadcast_object_list(shared, src=0)
    src_vocab, tgt_vocab, pairs = shared

    dataset = PairDataset(pairs)
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=128, sampler=sampler, collate_fn=collate_pairs, num_workers=4)

    model = DDP(Transformer(len(src_vocab), len(tgt_vocab)).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4, betas=(0.9, 0.98))
    for epoch in range(20):
        sampler.set_epoch(epoch)
        for src_ids, tgt_ids in loader:
            loss = model(src_ids.cuda(), tgt_ids.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if is_main_process():
            print(f"epoch {epoch}: loss {loss.item():.3f}")
            torch.save(model.module.state_dict(), "nmt.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
