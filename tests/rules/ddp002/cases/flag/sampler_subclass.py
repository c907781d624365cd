"""DDP speech-to-text training with a custom subclass of DistributedSampler that
groups utterances by length; it still shuffles by (seed + epoch), and set_epoch is
never called, so every epoch uses the same batches."""
import math
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from asr import Utterances, Wav2Vec2CTC, collate_audio


class LengthGroupedDistributedSampler(DistributedSampler):
    """Shuffle, then sort inside buckets of 50 * batch_size so padding stays small."""

    def __init__(self, dataset, lengths, batch_size, **kwargs):
        super().__init__(dataset, **kwargs)
        self.lengths = lengths
        self.bucket = 50 * batch_size

    def __iter__(self):
        g = torch.Generator()
        g.manual_seed(self.seed + self.epoch)
        order = torch.randperm(len(self.dataset), generator=g).tolist()
        buckets = [order[i:i + self.bucket] for i in range(0, len(order), self.bucket)]
        order = [idx for b in buckets for idx in sorted(b, key=lambda j: self.lengths[j], reverse=True)]
        order += order[: self.total_size - len(order)]
        return iter(order[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return math.ceil(len(self.dataset) / self.num_replicas)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    utts = Utterances("/data/commonvoice/en/train.tsv")
    sampler = LengthGroupedDistributedSampler(utts, lengths=utts.num_frames, batch_size=16)
    loader = DataLoader(utts, batch_size=16, sampler=sampler, collate_fn=collate_audio, num_workers=6)

    model = DDP(Wav2Vec2CTC.from_pretrained("wav2vec2-base", vocab=utts.vocab).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)

    for epoch in range(30):  # <- DDP002
        model.train()
        for audio, audio_lens, labels, label_lens in loader:
            loss = model(audio.cuda(), audio_lens.cuda(), labels.cuda(), label_lens.cuda())
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: loss {loss.item():.3f}")
            torch.save(model.module.state_dict(), "w2v2_ctc.pt")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
