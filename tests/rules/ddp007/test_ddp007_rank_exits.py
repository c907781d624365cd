"""DDP007: an exit only some ranks take while the others go on into a collective.

Rank 0 leaves a loop (`break` / `return` under `if rank == 0:`) whose body the other ranks keep
running, with its barrier or all-reduce; Lightning's `trainer.should_stop` set on one rank; the
other ranks leaving (`if rank != 0 and <setting>: return`, `if rank != 0: continue`) before a
collective rank 0 goes on to.
"""

from __future__ import annotations

RULE = ["DDP007"]


def test_rank_zero_break_out_of_a_loop_with_a_barrier_is_flagged(lint):
    source = """
        import torch.distributed as dist

        def fit(model, batches, rank, patience):
            bad = 0
            for step, batch in enumerate(batches):
                model.step(batch)
                dist.barrier()
                if rank == 0:
                    bad = bad + 1 if model.worse() else 0
                    if bad > patience:
                        break
    """
    assert lint(source, RULE) == [(11, "DDP007")]


def test_rank_zero_return_from_a_loop_with_an_all_reduce_is_flagged(lint):
    source = """
        import torch.distributed as dist

        def fit(model, batches, rank, limit):
            for batch in batches:
                loss = model.step(batch)
                dist.all_reduce(loss)
                if rank == 0 and model.seen > limit:
                    print("done")
                    return loss
    """
    assert lint(source, RULE) == [(9, "DDP007")]


def test_rank_zero_break_from_a_loop_without_collectives_is_left_alone(lint):
    source = """
        import torch.distributed as dist

        dist.init_process_group("nccl")

        def report(lines, rank):
            for line in lines:
                if rank == 0:
                    if not line:
                        break
                    print(line)
    """
    assert lint(source, RULE) == []


def test_every_rank_breaking_through_its_own_arm_is_left_alone(lint):
    source = """
        import torch.distributed as dist

        def fit(model, batches, rank, flag):
            for batch in batches:
                model.step(batch)
                dist.barrier()
                if rank == 0:
                    print("rank 0 stops")
                    break
                else:
                    break
    """
    assert lint(source, RULE) == []


def test_the_decision_broadcast_before_every_rank_breaks_is_left_alone(lint):
    source = """
        import torch
        import torch.distributed as dist

        def fit(model, batches, rank, patience):
            stop = torch.zeros(1)
            for batch in batches:
                model.step(batch)
                if rank == 0 and model.stale > patience:
                    stop += 1
                dist.broadcast(stop, 0)
                if stop.item():
                    break
    """
    assert lint(source, RULE) == []


def test_lightning_stop_flag_set_on_rank_zero_is_flagged(lint):
    source = """
        import lightning.pytorch as pl

        class StopOnRequest(pl.Callback):
            def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
                if trainer.is_global_zero and self.requested():
                    trainer.should_stop = True
                trainer.strategy.barrier()
    """
    assert lint(source, RULE) == [(6, "DDP007")]


def test_lightning_stop_flag_reduced_across_ranks_is_left_alone(lint):
    source = """
        import lightning.pytorch as pl

        class StopOnRequest(pl.Callback):
            def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
                if trainer.is_global_zero and self.requested():
                    trainer.should_stop = True
                trainer.should_stop = trainer.strategy.reduce_boolean_decision(trainer.should_stop, all=False)
    """
    assert lint(source, RULE) == []


def test_other_ranks_leaving_under_a_setting_before_a_barrier_is_flagged(lint):
    source = """
        import torch.distributed as dist

        class Saver:
            def save(self, parts):
                if dist.get_rank() != 0 and not self.cfg.shard_layers:
                    return
                for part in parts:
                    part.write()
                dist.barrier()
    """
    assert lint(source, RULE) == [(6, "DDP007")]


def test_barrier_only_under_the_opposite_setting_is_left_alone(lint):
    source = """
        import torch.distributed as dist

        class Saver:
            def save(self, parts):
                if dist.get_rank() != 0 and not self.cfg.shard_layers:
                    return
                for part in parts:
                    part.write()
                if self.cfg.shard_layers:
                    dist.barrier()
    """
    assert lint(source, RULE) == []


def test_other_ranks_continuing_past_a_collective_is_flagged(lint):
    source = """
        import torch.distributed as dist

        def log_every(batches, rank, loss):
            for batch in batches:
                if rank != 0:
                    continue
                dist.all_reduce(loss)
                print(loss)
    """
    assert lint(source, RULE) == [(6, "DDP007")]


def test_other_ranks_continuing_after_the_collective_is_left_alone(lint):
    source = """
        import torch.distributed as dist

        def log_every(batches, rank, loss):
            for batch in batches:
                dist.all_reduce(loss)
                if rank != 0:
                    continue
                print(loss)
    """
    assert lint(source, RULE) == []


def test_rank_zero_error_return_outside_any_loop_is_left_alone(lint):
    # the entry function ends on rank 0 with an error: its process exits and the launcher stops the others
    source = """
        import os
        import torch.distributed as dist

        def main(args, rank):
            dist.init_process_group("nccl")
            if rank == 0 and os.path.exists(args.out):
                print("output exists")
                return -1
            dist.barrier()
    """
    assert lint(source, RULE) == []
