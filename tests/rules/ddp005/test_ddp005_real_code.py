"""DDP005 on constructs found in real, public training scripts that once misled ddplint (false
positives) or hid a real bug from it (misses). Each is written from scratch to reproduce the
construct; the fix for each lives in the shared analysis, not in a rule. See docs/precision.md."""

from __future__ import annotations


def test_rank_zero_of_a_single_process_run_is_not_a_hardcoded_gpu(lint):
    # A classifier script: `rank = 0` on the non-distributed path, `.to(rank)` everywhere, and a
    # spawned worker that the single-GPU path calls directly with 0.
    assert lint(
        """
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(gpu, args):
            if args.distributed:
                dist.init_process_group("nccl", rank=gpu, world_size=args.world)
                torch.cuda.set_device(gpu)
            net = Net().cuda(gpu)

        def main(args):
            if args.ddp:
                dist.init_process_group("nccl")
                rank = dist.get_rank() % torch.cuda.device_count()
                torch.cuda.set_device(rank)
            else:
                rank = 0
            model = Net().to(rank)
            if args.distributed:
                mp.spawn(worker, args=(args,), nprocs=args.world)
            else:
                worker(0, args)
        """,
        ["DDP005"],
    ) == []


def test_placement_in_a_helper_only_rank_zero_calls(lint):
    # A TRL distillation callback: the pass-rate evaluation returns early on other ranks and
    # moves the model to cuda:0, rank 0's own GPU.
    assert lint(
        """
        import torch
        import torch.distributed as dist

        def is_main_process():
            return not dist.is_initialized() or dist.get_rank() == 0

        class PassRate:
            def on_step_end(self, model):
                if not is_main_process():
                    return
                self.evaluate(model)

            def evaluate(self, model):
                model.to(torch.device("cuda:0"))

        dist.init_process_group("nccl")
        """,
        ["DDP005"],
    ) == []


def test_set_device_zero_declares_one_gpu_per_process(lint):
    # A character-level GPT trained across machines with one GPU each: every rank pins GPU 0
    # on purpose and says so with set_device(0).
    assert lint(
        """
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel

        dist.init_process_group("nccl", init_method=f"tcp://{host}:{port}", rank=RANK, world_size=WORLD)
        torch.cuda.set_device(0)
        model = DistributedDataParallel(GPT(vocab).cuda(), device_ids=[0])
        """,
        ["DDP005"],
    ) == []
