"""DDP script that passes a RandomSampler: the loader has a sampler, but it draws
from the full dataset on every rank."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler

from qa import SquadFeatures, SpanExtractor


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    train_features = SquadFeatures("/data/squad/train-v1.1.json", max_len=384)
    eval_features = SquadFeatures("/data/squad/dev-v1.1.json", max_len=384)

    train_loader = DataLoader(train_features, sampler=RandomSampler(train_features), batch_size=24,  # <- DDP001
                              num_workers=4)
    eval_loader = DataLoader(eval_features, sampler=SequentialSampler(eval_features), batch_size=64)

    model = DDP(SpanExtractor("bert-base-uncased").to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)

    for epoch in range(2):
        model.train()
        for batch in train_loader:
            batch = {k: v.to(device) for k, v in batch.items()}
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

    if dist.get_rank() == 0:
        model.eval()
        n_exact = 0
        with torch.no_grad():
            for batch in eval_loader:
                batch = {k: v.to(device) for k, v in batch.items()}
                n_exact += model.module.exact_match(**batch)
        print("exact match:", n_exact / len(eval_features))
        torch.save(model.module.state_dict(), "span_extractor.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
