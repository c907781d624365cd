"""DDP007 under a rank kept in a dictionary (`cfg["rank"] = dist.get_rank()`, a config read from a
file with a "local_rank" key): `if cfg["rank"] == 0:` is a rank-0 guard as `if args.rank == 0:`
is. A key holding something else (`cfg["rank"] = 0` for a ranking, a number of layers) is not."""

from __future__ import annotations


def test_rank_stored_in_a_config_dict_guards_a_collective(lint):
    found = lint(
        """
        import torch.distributed as dist

        def run(cfg):
            dist.init_process_group("nccl")
            cfg["rank"] = dist.get_rank()
            stats = train(cfg)
            if cfg["rank"] == 0:
                dist.all_reduce(stats)
        """,
        select=["DDP007"],
    )
    assert found == [(8, "DDP007")]


def test_rank_key_of_a_config_loaded_from_a_file_guards_a_collective(lint):
    found = lint(
        """
        import json
        import torch.distributed as dist

        config = json.load(open("run.json"))
        dist.init_process_group("nccl")
        if config["local_rank"] == 0:
            dist.barrier()
        """,
        select=["DDP007"],
    )
    assert found == [(7, "DDP007")]


def test_collective_before_the_config_rank_test_is_quiet(lint):
    found = lint(
        """
        import torch.distributed as dist

        def run(cfg):
            dist.init_process_group("nccl")
            cfg["rank"] = dist.get_rank()
            stats = train(cfg)
            dist.all_reduce(stats)
            if cfg["rank"] == 0:
                print(stats)
        """,
        select=["DDP007"],
    )
    assert found == []


def test_key_named_rank_holding_something_else_is_not_a_rank(lint):
    found = lint(
        """
        import torch.distributed as dist

        dist.init_process_group("nccl")
        lora = {"rank": 8}
        lora["rank"] = args.adapter_width
        if lora["rank"] == 0:
            dist.barrier()
        """,
        select=["DDP007"],
    )
    assert found == []
