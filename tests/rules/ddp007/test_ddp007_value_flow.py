"""DDP007 where it depends on what a value is where it is used, in program order, and on which
scripts are distributed: collectives matched under opposite conditions, framework collectives and
rank guards several calls deep. Every shape is tested on what must be flagged and on what must be
left alone."""

from __future__ import annotations

import pytest


def test_forward_before_the_wrap_is_not_a_wrapped_forward(lint):
    snippet = """
        import torch.distributed as dist
        import torch.nn as nn
        from torch.nn.parallel import DistributedDataParallel

        def main():
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
            {before}
            model = DistributedDataParallel(model)
            {after}
            dist.barrier()
        """
    probe = "if rank == 0:\n                model(sample)"
    assert lint(snippet.format(before=probe, after="pass"), ["DDP007"]) == []
    assert lint(snippet.format(before="pass", after=probe), ["DDP007"]) == [(12, "DDP007")]


# -- DDP007: collectives some ranks never reach ---------------------------------------------------
def test_collective_reached_under_the_opposite_condition_is_matched(lint):
    source = """
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            if rank == 0:
                prepare()
                dist.barrier()
            {other}
        """
    assert lint(source.format(other="else:\n                dist.barrier()"), ["DDP007"]) == []
    assert lint(source.format(other="if rank != 0:\n                dist.barrier()"), ["DDP007"]) == []
    assert lint(source.format(other="report()"), ["DDP007"]) == [(8, "DDP007")]


def test_an_accelerator_is_known_by_its_value_not_its_name(lint):
    source = """
        from accelerate import Accelerator
        from metrics import Tracker

        acc = {built}
        for batch in loader:
            acc.backward(model(batch))
        if acc.is_main_process:
            scores = acc.gather_for_metrics(predictions)
        """
    assert lint(source.format(built="Accelerator()"), ["DDP007"]) == [(8, "DDP007")]
    # a metrics object's own gather is no collective of the Accelerator
    assert lint(source.format(built="Tracker()"), ["DDP007"]) == []


LIGHTNING_MODULE = """
    import lightning.pytorch as pl

    class {name}({base}):
        def validation_step(self, batch, batch_idx):
            loss = self.loss(batch)
            if self.trainer.is_global_zero:
                {call}
    """


@pytest.mark.parametrize("call", ["self.log('val_loss', loss, sync_dist=True)", "self.all_gather(loss)"])
def test_a_lightning_module_collective_on_one_rank(lint, call):
    source = LIGHTNING_MODULE.format(name="Classifier", base="pl.LightningModule", call=call)
    assert lint(source, ["DDP007"]) == [(7, "DDP007")]


@pytest.mark.parametrize(
    "base, call",
    [
        ("pl.LightningModule", "self.log('val_loss', loss)"),  # no sync: a local log
        ("pl.LightningModule", "self.log('val_loss', loss, sync_dist=False)"),
        ("Recorder", "self.all_gather(loss)"),  # not a LightningModule: its own method
    ],
)
def test_lightning_logging_without_sync_and_other_classes_are_left_alone(lint, base, call):
    assert lint(LIGHTNING_MODULE.format(name="Classifier", base=base, call=call), ["DDP007"]) == []


ENGINE_SAVE = """
    import deepspeed
    import torch.distributed as dist

    def main(args, net):
        engine, optimizer, _, _ = deepspeed.initialize(args=args, model=net, model_parameters=net.parameters())
        for epoch in range(args.epochs):
            train_one_epoch(engine)
            {save}
    """


def test_deepspeed_save_checkpoint_on_rank_zero_only(lint):
    # DeepSpeed saves every rank's shard: all processes must call it
    on_one = ENGINE_SAVE.format(save="if dist.get_rank() == 0:\n                engine.save_checkpoint(args.out)")
    assert lint(on_one, ["DDP007"]) == [(9, "DDP007")]
    assert lint(ENGINE_SAVE.format(save="engine.save_checkpoint(args.out)"), ["DDP007"]) == []
    # a save_checkpoint of something else (a plain object of the script) is no collective
    other = on_one.replace("engine.save_checkpoint", "optimizer_log.save_checkpoint")
    assert lint(other, ["DDP007"]) == []


@pytest.mark.parametrize("wrapper, found", [("FSDP", [(9, "DDP007")]), ("DDP", [])])
def test_state_dict_on_rank_zero_is_a_collective_only_for_fsdp(lint, wrapper, found):
    # FSDP's state_dict() all-gathers the sharded parameters; DDP's only reads the local replica
    source = f"""
        import torch
        import torch.distributed as dist
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        from torch.nn.parallel import DistributedDataParallel as DDP

        dist.init_process_group("nccl")
        model = {wrapper}(Net())
        if dist.get_rank() == 0:
            torch.save(model.state_dict(), "model.pt")
        """
    assert lint(source, ["DDP007"]) == found


@pytest.mark.parametrize(
    "save, found",
    [
        ("if dist.get_rank() == 0:\n    dcp.save(state, checkpoint_id=path)", [(7, "DDP007")]),
        ("if dist.get_rank() == 0:\n    dcp.save(state, checkpoint_id=path, no_dist=True)", []),
        ("dcp.save(state, checkpoint_id=path)", []),
    ],
)
def test_distributed_checkpoint_save_is_a_collective_unless_told_otherwise(lint, save, found):
    source = "import torch.distributed as dist\nimport torch.distributed.checkpoint as dcp\n\n"
    source += 'dist.init_process_group("nccl")\nstate = {"model": model.state_dict()}\n' + save + "\n"
    assert lint(source, ["DDP007"]) == found


@pytest.mark.parametrize(
    "test, found",
    [
        ("rank == 0", [(5, "DDP007")]),
        ("not dist.is_initialized() or rank == 0", [(5, "DDP007")]),  # the single-process run, or rank 0
        ("args.local_rank == -1 or rank == 0", [(5, "DDP007")]),
        # every rank with --save_all, rank 0 alone without it: some ranks (issue 20)
        ("args.save_all or rank == 0", [(5, "DDP007")]),
        # rank 0 alone for legacy checkpoints, with nothing on the way that needs another kind
        ("not dist.is_initialized() or kind != 'legacy' or rank == 0", [(5, "DDP007")]),
    ],
)
def test_an_or_condition_is_one_ranks_only_when_each_side_is(lint, test, found):
    source = f"""
        import torch.distributed as dist
        dist.init_process_group("nccl")
        rank = dist.get_rank()
        if {test}:
            dist.barrier()
        """
    assert lint(source, ["DDP007"]) == found


@pytest.mark.parametrize(
    "test, found",
    [
        ("args.rank % ngpus_per_node == 0", [(7, "DDP007")]),  # the first rank of each node
        ("step % ngpus_per_node == 0", []),  # not a rank: every rank takes the same steps
    ],
)
def test_the_first_rank_of_each_node_after_the_rank_is_rebuilt(lint, test, found):
    # the pytorch/examples launcher shape: the global rank is rebuilt from itself and the GPU index
    source = f"""
        import torch.distributed as dist
        def main_worker(gpu, ngpus_per_node, args):
            args.rank = args.rank * ngpus_per_node + gpu
            dist.init_process_group("nccl", world_size=args.world_size, rank=args.rank)
            for step in range(args.steps):
                if {test}:
                    dist.barrier()
        """
    assert lint(source, ["DDP007"]) == found


def test_collective_several_calls_deep_under_the_callees_own_rank_guard(lint):
    source = """
        import torch.distributed as dist

        def sync_logs(rank):
            # balanced on its own: every rank that calls it reaches one barrier
            if rank == 0:
                write_logs()
                dist.barrier()
            else:
                dist.barrier()

        def evaluate(model, rank):
            score = model.score()
            sync_logs(rank)
            return score

        def main():
            dist.init_process_group("nccl")
            rank = dist.get_rank()
            {call}
        """
    assert lint(source.format(call="if rank == 0:\n                evaluate(model, rank)"), ["DDP007"]) == [(20, "DDP007")]
    assert lint(source.format(call="evaluate(model, rank)"), ["DDP007"]) == []


def test_collective_after_the_early_return_of_the_other_ranks_through_a_call(lint):
    source = """
        import torch.distributed as dist

        def finish():
            dist.barrier()

        def save(model, rank):
            if rank != 0:
                return
            write(model)
            {tail}
        """
    assert lint(source.format(tail="finish()"), ["DDP007"]) == [(10, "DDP007")]
    assert lint(source.format(tail="log()"), ["DDP007"]) == []


def test_callee_collective_under_a_condition_the_caller_decided_otherwise(lint):
    source = """
        import torch.distributed as dist

        class Tracker:
            def _sync(self, value):
                if self.cfg.pipelined:
                    dist.all_reduce(value)
                return value

            def update(self, value):
                if self.cfg.pipelined:
                    self._sync(value)
                else:
                    if dist.get_rank() == 0:
                        self._sync(value)
                    {tail}
        """
    assert lint(source.format(tail="dist.barrier()"), ["DDP007"]) == []
    flagged = source.replace("if self.cfg.pipelined:\n                    dist.all_reduce", "if self.cfg.verbose:\n                    dist.all_reduce")
    # Under a condition the call site does not decide: rank 0 may reach it alone.
    assert lint(flagged.format(tail="dist.barrier()"), ["DDP007"]) == [(14, "DDP007")]


def test_lightning_save_checkpoint_on_global_zero_only(lint):
    source = """
        import lightning.pytorch as pl

        class Saver(pl.Callback):
            def on_train_epoch_end(self, trainer, module):
                if trainer.is_global_zero:
                    trainer.save_checkpoint("last.ckpt")
                {tail}
        """
    assert lint(source.format(tail="pass"), ["DDP007"]) == [(6, "DDP007")]
    assert lint(source.replace("if trainer.is_global_zero:\n                    ", "").format(tail="pass"), ["DDP007"]) == []


def test_literal_flags_passed_to_a_helper_decide_its_guards(lint):
    source = """
        import torch

        def load_features(args, evaluate=False):
            if args.local_rank not in [-1, 0] and not evaluate:
                torch.distributed.barrier()
            feats = torch.load("cache_features", map_location="cpu")
            if args.local_rank == 0 and not evaluate:
                torch.distributed.barrier()
            return feats

        torch.distributed.init_process_group("nccl")
        if args.local_rank in [-1, 0]:
            feats = load_features(args{flag})
        """
    assert lint(source.format(flag=", evaluate=True"), ["DDP007"]) == []
    assert lint(source.format(flag=""), ["DDP007"]) == [(13, "DDP007")]


def test_an_amount_per_rank_is_not_a_rank(lint):
    source = """
        import torch.distributed as dist

        def setup(cfg):
            tokens = cfg.{name}
            if tokens % 8 != 0:
                raise ValueError("tokens must divide by 8")
            dist.barrier()
        """
    assert lint(source.format(name="tokens_per_dp_rank"), ["DDP007"]) == []
    assert lint(source.format(name="local_rank"), ["DDP007"]) == [(7, "DDP007")]
