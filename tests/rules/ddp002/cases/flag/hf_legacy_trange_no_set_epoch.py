import os
import torch
from torch.utils.data import DataLoader, RandomSampler, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm, trange
from my_glue import convert_examples_to_features, processor

def load_and_cache_examples(args, tokenizer, evaluate=False):
    if args.local_rank not in [-1, 0] and not evaluate:
        torch.distributed.barrier()
    cached = os.path.join(args.data_dir, "cached_train")
    if os.path.exists(cached):
        features = torch.load(cached)
    else:
        examples = processor.get_train_examples(args.data_dir)
        features = convert_examples_to_features(examples, tokenizer)
        if args.local_rank in [-1, 0]:
            torch.save(features, cached)
    if args.local_rank == 0 and not evaluate:
        torch.distributed.barrier()
    return TensorDataset(*features)

def train(args, train_dataset, model, optimizer):
    train_sampler = RandomSampler(train_dataset) if args.local_rank == -1 else DistributedSampler(train_dataset)
    train_dataloader = DataLoader(train_dataset, sampler=train_sampler, batch_size=args.train_batch_size)
    train_iterator = trange(int(args.num_train_epochs), desc="Epoch", disable=args.local_rank not in [-1, 0])
    for _ in train_iterator:  # <- DDP002
        epoch_iterator = tqdm(train_dataloader, desc="Iteration", disable=args.local_rank not in [-1, 0])
        for step, batch in enumerate(epoch_iterator):
            loss = model(*batch)[0]
            loss.backward()
            optimizer.step()

def main(args, model, tokenizer, optimizer):
    if args.local_rank != -1:
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend="nccl")
    train_dataset = load_and_cache_examples(args, tokenizer)
    train(args, train_dataset, model, optimizer)
