"""Step-budgeted DDP training: loop until max_steps, reseeding the sampler each
time the loader is exhausted."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from speech import Conformer, LibriSpeech, ctc_collate


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max_steps", type=int, default=150_000)
    parser.add_argument("--batch_size", type=int, default=32)
    args = parser.parse_args()

    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    train_set = LibriSpeech("/data/librispeech", splits=["train-clean-100", "train-clean-360"])
    sampler = DistributedSampler(train_set, drop_last=True)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, collate_fn=ctc_collate,
                        num_workers=8, pin_memory=True)

    model = DDP(Conformer(vocab_size=train_set.vocab_size).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.98), weight_decay=1e-3)
    ctc = torch.nn.CTCLoss(zero_infinity=True)

    step, epoch = 0, 0
    while step < args.max_steps:
        sampler.set_epoch(epoch)
        for feats, feat_lens, tokens, token_lens in loader:
            log_probs, out_lens = model(feats.cuda(), feat_lens.cuda())
            loss = ctc(log_probs.transpose(0, 1), tokens.cuda(), out_lens, token_lens.cuda())
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            step += 1
            if step >= args.max_steps:
                break
        epoch += 1
        if dist.get_rank() == 0:
            print(f"finished pass {epoch} at step {step}, loss {loss.item():.3f}")
            torch.save(model.module.state_dict(), "conformer.pt")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
