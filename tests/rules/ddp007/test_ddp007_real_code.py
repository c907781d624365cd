"""DDP007 on constructs found in real, public training scripts that once misled ddplint (false
positives) or hid a real bug from it (misses). Each is written from scratch to reproduce the
construct; the fix for each lives in the shared analysis, not in a rule. See docs/precision.md."""

from __future__ import annotations


def test_callee_whose_barrier_is_guarded_by_rank_is_not_a_collective(lint):
    # Legacy Hugging Face scripts: evaluation under `local_rank in [-1, 0]` calls a feature-cache
    # helper whose barriers sit under `... and not evaluate`, and passes evaluate=True: rank 0
    # never reaches them. (Without the flag, rank 0 alone would reach `if local_rank == 0:
    # barrier()` and hang: see test_ddp007_value_flow.py.)
    assert lint(
        """
        import torch

        def load_features(args, split, evaluate=False):
            if args.local_rank not in [-1, 0] and not evaluate:
                torch.distributed.barrier()
            feats = torch.load(f"cache_{split}_features")
            if args.local_rank == 0 and not evaluate:
                torch.distributed.barrier()
            return feats

        def evaluate(args, model):
            feats = load_features(args, "dev", evaluate=True)
            return sum(model(x).item() for x in feats)

        torch.distributed.init_process_group("nccl")
        if args.do_eval and args.local_rank in [-1, 0]:
            results = evaluate(args, model.module)
        """,
        ["DDP007"],
    ) == []


def test_forward_through_an_fsdp2_model_on_rank_zero_hangs(lint):
    # A FSDP2 tutorial: `model = fully_shard(model, mesh=mesh)`, then rank-0 validation: the
    # forward all-gathers parameters the other ranks never send (miss, now found).
    assert lint(
        """
        import torch
        import torch.distributed as dist
        from torch.distributed.fsdp import fully_shard

        def test(model, loader):
            model.eval()
            with torch.no_grad():
                return sum(model(x).sum().item() for x in loader)

        dist.init_process_group("nccl")
        model = fully_shard(Net(), mesh=mesh)
        for epoch in range(3):
            train(model)
            dist.barrier()
            if dist.get_rank() == 0:
                acc = test(model, val_loader)
        """,
        ["DDP007"],
    ) == [(16, "DDP007")]
