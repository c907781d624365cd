"""Token classification (NER) in the style of the old transformers examples:
DistributedDataParallel when launched with --local_rank, and the classic
`if args.n_gpu > 1: model = torch.nn.DataParallel(model)` fallback otherwise."""
import argparse
import os

import torch
from torch.utils.data import DataLoader, RandomSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm, trange
from transformers import AdamW, AutoModelForTokenClassification, AutoTokenizer

from ner_utils import convert_examples_to_features, read_examples_from_file


def load_examples(args, tokenizer, labels, mode):
    if args.local_rank not in [-1, 0] and mode == "train":
        torch.distributed.barrier()
    cache = os.path.join(args.data_dir, f"cached_{mode}_{args.max_seq_length}")
    if os.path.exists(cache):
        features = torch.load(cache)
    else:
        examples = read_examples_from_file(args.data_dir, mode)
        features = convert_examples_to_features(examples, labels, args.max_seq_length, tokenizer)
        if args.local_rank in [-1, 0]:
            torch.save(features, cache)
    if args.local_rank == 0 and mode == "train":
        torch.distributed.barrier()
    return TensorDataset(torch.tensor([f.input_ids for f in features]),
                         torch.tensor([f.input_mask for f in features]),
                         torch.tensor([f.label_ids for f in features]))


def train(args, dataset, model):
    sampler = RandomSampler(dataset) if args.local_rank == -1 else DistributedSampler(dataset)
    dataloader = DataLoader(dataset, sampler=sampler, batch_size=args.per_gpu_train_batch_size * max(1, args.n_gpu))
    optimizer = AdamW(model.parameters(), lr=args.learning_rate)

    if args.n_gpu > 1:
        model = torch.nn.DataParallel(model)  # <- DDP003
    if args.local_rank != -1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank],
                                                          output_device=args.local_rank)

    for epoch in trange(args.num_train_epochs, disable=args.local_rank not in [-1, 0]):
        if args.local_rank != -1:
            dataloader.sampler.set_epoch(epoch)
        for batch in tqdm(dataloader, disable=args.local_rank not in [-1, 0]):
            model.train()
            input_ids, mask, label_ids = (t.to(args.device) for t in batch)
            loss = model(input_ids=input_ids, attention_mask=mask, labels=label_ids)[0]
            if args.n_gpu > 1:
                loss = loss.mean()
            loss.backward()
            optimizer.step()
            model.zero_grad()
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--per_gpu_train_batch_size", type=int, default=8)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--num_train_epochs", type=int, default=3)
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()

    if args.local_rank == -1:
        args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        args.n_gpu = torch.cuda.device_count()
    else:
        torch.cuda.set_device(args.local_rank)
        args.device = torch.device("cuda", args.local_rank)
        torch.distributed.init_process_group(backend="nccl")
        args.n_gpu = 1

    labels = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
    tokenizer = AutoTokenizer.from_pretrained("bert-base-cased")
    model = AutoModelForTokenClassification.from_pretrained("bert-base-cased", num_labels=len(labels))
    model.to(args.device)

    train_dataset = load_examples(args, tokenizer, labels, mode="train")
    model = train(args, train_dataset, model)

    if args.local_rank in [-1, 0]:
        os.makedirs(args.output_dir, exist_ok=True)
        (model.module if hasattr(model, "module") else model).save_pretrained(args.output_dir)
        tokenizer.save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
