"""Fine-tune BERT on a GLUE-style task, written like the pre-Trainer transformers
examples: the first process builds the feature cache while the others wait at
a barrier, then everyone reads the cache."""
import argparse
import os

import torch
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm, trange
from transformers import AdamW, BertForSequenceClassification, BertTokenizer, get_linear_schedule_with_warmup
from transformers import glue_convert_examples_to_features as convert_examples_to_features
from transformers import glue_processors as processors


def load_and_cache_examples(args, task, tokenizer, evaluate=False):
    if args.local_rank not in [-1, 0] and not evaluate:
        torch.distributed.barrier()  # let the first process build the cache; the rest read it

    processor = processors[task]()
    cached = os.path.join(args.data_dir, f"cached_{'dev' if evaluate else 'train'}_{args.max_seq_length}_{task}")
    if os.path.exists(cached) and not args.overwrite_cache:
        features = torch.load(cached)
    else:
        examples = processor.get_dev_examples(args.data_dir) if evaluate else processor.get_train_examples(args.data_dir)
        features = convert_examples_to_features(examples, tokenizer, max_length=args.max_seq_length,
                                                label_list=processor.get_labels(), output_mode="classification")
        if args.local_rank in [-1, 0]:
            torch.save(features, cached)

    if args.local_rank == 0 and not evaluate:
        torch.distributed.barrier()

    return TensorDataset(torch.tensor([f.input_ids for f in features], dtype=torch.long),
                         torch.tensor([f.attention_mask for f in features], dtype=torch.long),
                         torch.tensor([f.token_type_ids for f in features], dtype=torch.long),
                         torch.tensor([f.label for f in features], dtype=torch.long))


def train(args, train_dataset, model):
    train_sampler = RandomSampler(train_dataset) if args.local_rank == -1 else DistributedSampler(train_dataset)
    train_dataloader = DataLoader(train_dataset, sampler=train_sampler, batch_size=args.train_batch_size)
    t_total = len(train_dataloader) * args.num_train_epochs
    optimizer = AdamW(model.parameters(), lr=args.learning_rate, eps=1e-8)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=0, num_training_steps=t_total)

    model.zero_grad()
    train_iterator = trange(int(args.num_train_epochs), desc="Epoch", disable=args.local_rank not in [-1, 0])
    for epoch in train_iterator:
        if args.local_rank != -1:
            train_sampler.set_epoch(epoch)
        for batch in tqdm(train_dataloader, desc="Iteration", disable=args.local_rank not in [-1, 0]):
            model.train()
            batch = tuple(t.to(args.device) for t in batch)
            inputs = {"input_ids": batch[0], "attention_mask": batch[1], "token_type_ids": batch[2], "labels": batch[3]}
            loss = model(**inputs)[0]
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            model.zero_grad()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--task_name", default="mrpc")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--overwrite_cache", action="store_true")
    parser.add_argument("--local_rank", type=int, default=-1)
    args = parser.parse_args()

    if args.local_rank == -1:
        args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        torch.cuda.set_device(args.local_rank)
        args.device = torch.device("cuda", args.local_rank)
        torch.distributed.init_process_group(backend="nccl")

    if args.local_rank not in [-1, 0]:
        torch.distributed.barrier()  # only the first process downloads the weights and vocab
    tokenizer = BertTokenizer.from_pretrained("bert-base-uncased")
    model = BertForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
    if args.local_rank == 0:
        torch.distributed.barrier()

    model.to(args.device)
    if args.local_rank != -1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank],
                                                          output_device=args.local_rank)

    train_dataset = load_and_cache_examples(args, args.task_name, tokenizer, evaluate=False)
    train(args, train_dataset, model)

    if args.local_rank in [-1, 0]:
        os.makedirs(args.output_dir, exist_ok=True)
        to_save = model.module if hasattr(model, "module") else model
        to_save.save_pretrained(args.output_dir)
        tokenizer.save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
