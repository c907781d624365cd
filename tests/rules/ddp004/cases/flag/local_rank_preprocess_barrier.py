"""Intent classification launched with torch.distributed.launch. The first process
parses and tokenizes the training file, then everybody meets at a barrier - but
the other ranks never load anything, so they train on an empty list."""
import argparse
import json
import logging

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler
from transformers import AutoModelForSequenceClassification, AutoTokenizer

logger = logging.getLogger(__name__)
LABELS = ["book_flight", "cancel", "weather", "music", "alarm", "other"]


class Encoded(Dataset):
    def __init__(self, examples):
        self.examples = examples

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        return self.examples[i]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)  # <- DDP005
    parser.add_argument("--train_file", default="/data/intents/train.jsonl")
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()

    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl")
    tokenizer = AutoTokenizer.from_pretrained("distilroberta-base")

    train_examples = []
    if args.local_rank in [-1, 0]:  # <- DDP004
        with open(args.train_file) as f:
            rows = [json.loads(line) for line in f]
        for row in rows:
            enc = tokenizer(row["utterance"], truncation=True, max_length=64, padding="max_length",
                            return_tensors="pt")
            train_examples.append((enc["input_ids"][0], enc["attention_mask"][0], LABELS.index(row["intent"])))
        logger.info("encoded %d examples", len(train_examples))
    dist.barrier()

    train_ds = Encoded(train_examples)
    sampler = DistributedSampler(train_ds)
    loader = DataLoader(train_ds, batch_size=64, sampler=sampler)

    model = AutoModelForSequenceClassification.from_pretrained("distilroberta-base", num_labels=len(LABELS))
    model = DDP(model.cuda(), device_ids=[args.local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for input_ids, mask, label in loader:
            out = model(input_ids=input_ids.cuda(), attention_mask=mask.cuda(), labels=label.cuda())
            out.loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    if dist.get_rank() == 0:
        model.module.save_pretrained("intent-model")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
