"""DDP010: what rank 0 alone may do in a training loop without an evaluation pass: a vote over
features every rank already made (tensor arithmetic, no model), and text generated from a few
prompts written in the code."""

from __future__ import annotations

VOTE = """
import torch
import torch.distributed as dist

@torch.no_grad()
def vote(bank, bank_labels, queries, query_labels, k):
    hits = 0
    step = 100
    for start in range(0, len(query_labels), step):
        chunk = queries[start:start + step]
        scores = torch.mm(chunk, bank.t())
        _, nearest = scores.topk(k, dim=1)
        guesses = torch.gather(bank_labels.expand(chunk.size(0), -1), 1, nearest)
        {score_line}
        hits += (guesses.mode(1).values == query_labels[start:start + step]).sum().item()
    return hits / len(query_labels)

dist.init_process_group("nccl")
for epoch in range(epochs):
    train_one_epoch(model, optimizer, train_loader)
    bank, bank_labels, queries, query_labels = gather_features(model, feature_loader)
    if dist.get_rank() == 0:
        print(epoch, vote(bank, bank_labels, queries, query_labels, 20))
    dist.barrier()
"""


def test_rank_zero_vote_over_gathered_features_is_left_alone(lint):
    source = VOTE.replace("{score_line}", "guesses = guesses.long()")
    assert lint(source, select=["DDP010"]) == []


def test_rank_zero_loop_that_runs_the_model_on_each_chunk_is_flagged(lint):
    source = VOTE.replace("{score_line}", "guesses = model(chunk).argmax(1)")
    assert lint(source, select=["DDP010"]) == [(21, "DDP010")]


SAMPLES = """
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
master = dist.get_rank() == 0
for step in range(max_steps):
    x, y = train_data.next_batch()
    model(x, y).backward()
    optimizer.step()
    if step % 500 == 0 and master:
        model.eval()
        {prompts}
        encoded = [tokenizer.encode(p) for p in prompts]
        outputs = raw_model.generate(encoded, max_new_tokens=48, temperature=0.8)
        texts = [tokenizer.decode(o) for o in outputs]
        for prompt, text in zip(prompts, texts):
            print(prompt, text)
        model.train()
"""


def test_rank_zero_generation_from_written_prompts_is_left_alone(lint):
    source = SAMPLES.replace("{prompts}", 'prompts = ["Once upon a time", "The capital of France is"]')
    assert lint(source, select=["DDP010"]) == []


def test_rank_zero_generation_over_a_file_of_prompts_is_flagged(lint):
    # as many prompts as the file has lines: a pass over data, not a sample for the log
    source = SAMPLES.replace("{prompts}", "prompts = [line.strip() for line in open(args.val_prompts)]")
    assert lint(source, select=["DDP010"]) == [(10, "DDP010")]
