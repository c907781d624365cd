"""DDP005 where it depends on what a value is where it is used, in program order, and on which
scripts are distributed: devices replaced or chosen per rank, and scripts that are not distributed
after all. Every shape is tested on what must be flagged and on what must be left alone."""

from __future__ import annotations

import textwrap


def test_gpu_zero_replaced_on_the_distributed_path_is_not_a_placement_on_gpu0(lint):
    silent = """
        import torch
        import torch.distributed as dist

        def main(args):
            args.gpu = 0
            if args.distributed:
                args.gpu = args.local_rank
                torch.cuda.set_device(args.gpu)
                dist.init_process_group("nccl")
            model = build().cuda(args.gpu)

            def resume():
                return torch.load(args.resume, map_location=lambda s, loc: s.cuda(args.gpu))
        """
    assert lint(silent, ["DDP005"]) == []
    flagged = """
        import torch
        import torch.distributed as dist

        def main(args):
            args.gpu = 0
            if args.verbose:
                args.gpu = args.local_rank
            dist.init_process_group("nccl")
            model = build().cuda(args.gpu)
        """
    assert lint(flagged, ["DDP005"]) == [(9, "DDP005")]
    # The zero written after the distributed branch reaches the placement on every path.
    flagged_after = """
        import torch
        import torch.distributed as dist

        def main(args):
            if args.distributed:
                args.gpu = args.local_rank
                dist.init_process_group("nccl")
            args.gpu = 0
            model = build().cuda(args.gpu)
        """
    assert lint(flagged_after, ["DDP005"]) == [(9, "DDP005")]


# -- single-process code inside a distributed project ---------------------------------------------
def test_checkpoint_conversion_with_dcp_only_is_not_distributed(lint):
    conversion = """
        import torch
        import torch.distributed.checkpoint as dcp

        def main(path):
            state = {"model": build().state_dict()}
            dcp.load(state, checkpoint_id=path)
            model = build().to(torch.device("cuda:0"))
        """
    assert lint(conversion, ["DDP005"]) == []
    helper = """
        import torch
        import torch.distributed as dist

        def log_on_rank(msg):
            if dist.get_rank() == 0:
                print(msg)
            return torch.zeros(1).to("cuda:0")
        """
    assert lint(helper, ["DDP005"]) == [(7, "DDP005")]  # a helper run inside the job: still judged


def test_group_of_one_process_is_not_distributed(lint):
    for call in ('dist.init_process_group("fake", rank=0, world_size=8)', 'dist.init_process_group("gloo", rank=0, world_size=n)'):
        source = f"""
            import torch
            import torch.distributed as dist

            def main(n):
                {call}
                model = build().to("cuda:0")
            """
        assert lint(source, ["DDP005"]) == [], call
    assert lint(
        """
        import torch
        import torch.distributed as dist

        def main(n, rank):
            dist.init_process_group("nccl", rank=rank, world_size=n)
            model = build().to("cuda:0")
        """,
        ["DDP005"],
    ) == [(6, "DDP005")]


def test_single_process_guard_written_with_or(lint):
    source = """
        import torch
        import torch.distributed as dist

        def main(args):
            if {test}:
                device = torch.device("cuda:0")
            else:
                torch.cuda.set_device(args.local_rank)
                device = torch.device("cuda", args.local_rank)
                dist.init_process_group("nccl")
            model = build().to(device)
        """
    assert lint(source.format(test="args.local_rank == -1 or args.no_cuda"), ["DDP005"]) == []
    assert lint(source.format(test="args.local_rank == -1 and args.no_cuda"), ["DDP005"]) == []
    assert lint(source.format(test="args.fast or args.no_cuda"), ["DDP005"]) == [(6, "DDP005")]


# -- DDP005: devices chosen by rank through a table ----------------------------------------------
def test_device_picked_from_a_table_by_rank(lint):
    source = """
        import torch
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl")
            local_rank = dist.get_rank() % 2
            devices = {table}
            model = build().to(devices[{key}])
        """
    assert lint(source.format(table='{0: "cuda:0", 1: "cuda:1"}', key="local_rank"), ["DDP005"]) == []
    assert lint(source.format(table='["cuda:0", "cuda:1"]', key="local_rank"), ["DDP005"]) == []
    assert lint(source.format(table='{"main": "cuda:0", "aux": "cuda:1"}', key='"main"'), ["DDP005"]) == [(8, "DDP005")]
    # A computed key picks one of several devices: not GPU 0 on every rank for sure.
    assert lint(source.format(table='["cuda:0", "cuda:1"]', key="mode"), ["DDP005"]) == []
    assert lint(source.format(table='["cuda:0"]', key="0"), ["DDP005"]) == [(8, "DDP005")]


def test_device_set_by_a_spawned_project_function_or_a_framework_helper(lint, tmp_path):
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    (tmp_path / "launch.py").write_text(
        textwrap.dedent(
            """
            import torch
            import torch.distributed as dist

            def run(local_rank, world_size, func):
                dist.init_process_group("nccl", rank=local_rank, world_size=world_size)
                torch.cuda.set_device(local_rank)
                func()
            """
        )
    )
    (tmp_path / "tools.py").write_text(
        textwrap.dedent(
            """
            import torch
            import launch

            def start(n, func):
                torch.multiprocessing.spawn(launch.run, nprocs=n, args=(n, func))

            def measure(model, x):
                return model(x.cuda())
            """
        )
    )
    found = [d for d in lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP005"]]) if d.code == "DDP005"]
    assert found == []
    assert lint(
        """
        import torch
        import torch.distributed as dist
        from torchtune import utils

        dist.init_process_group("nccl")
        device = utils.get_device(device="cuda")
        model = build().to("cuda")
        """,
        ["DDP005"],
    ) == []
    assert lint(
        """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        model = build().to("cuda")
        """,
        ["DDP005"],
    ) == [(5, "DDP005")]


def test_fsdp_flag_guards_the_distributed_path(lint):
    source = """
        import torch
        import torch.distributed as dist

        def train(cfg, local_rank, batch):
            if cfg.{flag}:
                batch = batch.to(local_rank)
            else:
                batch = batch.to("cuda:0")
            dist.all_reduce(loss(batch))
        """
    assert lint(source.format(flag="enable_fsdp"), ["DDP005"]) == []
    assert lint(source.format(flag="use_amp"), ["DDP005"]) == [(8, "DDP005")]


def test_script_whose_distributed_calls_run_only_if_initialised_is_single_process(lint):
    source = """
        import torch
        import torch.distributed as dist

        def main():
            rank = dist.get_rank() if {guard} else 0
            model = build().to("cuda:0")
            print(rank)
        {main}
        """
    main = 'if __name__ == "__main__":\n            main()'
    assert lint(source.format(guard="dist.is_initialized()", main=main), ["DDP005"]) == []
    assert lint(source.format(guard="verbose", main=main), ["DDP005"]) == [(6, "DDP005")]
    # A helper module (no __main__) runs inside whatever job imports it: still judged.
    assert lint(source.format(guard="dist.is_initialized()", main=""), ["DDP005"]) == [(6, "DDP005")]


def test_device_handed_to_a_cuda_query_is_not_a_placement(lint):
    source = """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        arch = torch.cuda.get_device_properties(torch.device("cuda:0")).major
        {extra}
        """
    assert lint(source.format(extra=""), ["DDP005"]) == []
    assert lint(source.format(extra='model = build().to(torch.device("cuda:0"))'), ["DDP005"]) == [(6, "DDP005")]


def test_classy_vision_sets_the_device(lint):
    source = """
        import torch
        import torch.distributed as dist
        {imports}

        def run(local_rank):
            dist.init_process_group("nccl")
            {call}
            dist.all_reduce(torch.zeros(1).cuda())
        """
    helper = "from classy_vision.generic.distributed_util import set_cuda_device_index"
    assert lint(source.format(imports=helper, call="set_cuda_device_index(local_rank)"), ["DDP005"]) == []
    assert lint(source.format(imports="", call="pass"), ["DDP005"]) == [(8, "DDP005")]
