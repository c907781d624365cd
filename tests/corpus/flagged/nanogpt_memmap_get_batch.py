"""GPT pretraining loop, nanoGPT style: no DataLoader, random windows from a memmap.

Single GPU:  python nanogpt_memmap_get_batch.py
DDP:         torchrun --standalone --nproc_per_node=8 nanogpt_memmap_get_batch.py
"""
import math
import os
import pickle
import time

import numpy as np
import torch
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

from model import GPT, GPTConfig

out_dir = "out"
dataset = "openwebtext"
eval_interval = 2000
eval_iters = 200
gradient_accumulation_steps = 40
batch_size = 12
block_size = 1024
learning_rate = 6e-4
max_iters = 600000
warmup_iters = 2000
min_lr = 6e-5
backend = "nccl"

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    init_process_group(backend=backend)
    ddp_rank = int(os.environ["RANK"])
    ddp_local_rank = int(os.environ["LOCAL_RANK"])
    ddp_world_size = int(os.environ["WORLD_SIZE"])
    device = f"cuda:{ddp_local_rank}"
    torch.cuda.set_device(device)
    master_process = ddp_rank == 0
    seed_offset = ddp_rank
    gradient_accumulation_steps //= ddp_world_size
else:
    master_process = True
    seed_offset = 0
    ddp_world_size = 1
    device = "cuda"

if master_process:
    os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(1337 + seed_offset)

data_dir = os.path.join("data", dataset)


def get_batch(split):
    # re-open the memmap every call so pages are not kept resident between steps
    path = os.path.join(data_dir, "train.bin" if split == "train" else "val.bin")
    data = np.memmap(path, dtype=np.uint16, mode="r")
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy(data[i:i + block_size].astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + block_size].astype(np.int64)) for i in ix])
    return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)


vocab_size = 50304
meta_path = os.path.join(data_dir, "meta.pkl")
if os.path.exists(meta_path):
    with open(meta_path, "rb") as f:
        vocab_size = pickle.load(f)["vocab_size"]

model = GPT(GPTConfig(block_size=block_size, vocab_size=vocab_size)).to(device)
optimizer = model.configure_optimizers(0.1, learning_rate, (0.9, 0.95), "cuda")
scaler = torch.cuda.amp.GradScaler(enabled=True)
if ddp:
    model = DDP(model, device_ids=[ddp_local_rank])
raw_model = model.module if ddp else model


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ("train", "val"):
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            _, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * it / warmup_iters
    ratio = (it - warmup_iters) / (max_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * min(ratio, 1.0))) * (learning_rate - min_lr)


X, Y = get_batch("train")
iter_num, best_val_loss, t0 = 0, 1e9, time.time()
while True:
    for group in optimizer.param_groups:
        group["lr"] = get_lr(iter_num)
    if iter_num % eval_interval == 0 and master_process:  # <- DDP010
        losses = estimate_loss()
        print(f"step {iter_num}: train {losses['train']:.4f}, val {losses['val']:.4f}")
        if losses["val"] < best_val_loss:
            best_val_loss = losses["val"]
            torch.save({"model": raw_model.state_dict(), "optimizer": optimizer.state_dict(),
                        "iter_num": iter_num, "best_val_loss": best_val_loss},
                       os.path.join(out_dir, "ckpt.pt"))
    for micro_step in range(gradient_accumulation_steps):
        if ddp:
            model.require_backward_grad_sync = micro_step == gradient_accumulation_steps - 1
        with torch.autocast("cuda", dtype=torch.bfloat16):
            _, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch("train")
        scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    if iter_num % 10 == 0 and master_process:
        print(f"iter {iter_num}: loss {loss.item() * gradient_accumulation_steps:.4f}, {time.time() - t0:.2f}s")
        t0 = time.time()
    iter_num += 1
    if iter_num > max_iters:
        break

if ddp:
    destroy_process_group()
