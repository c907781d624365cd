"""DDP005: the rank's device is made current, but only after work that already used the current
device (GPU 0 in every process until then) ran on every rank. Program order within a function,
and the file's code that calls it, decides what "before" means."""

from __future__ import annotations

from rule_snippets import write_files


def _ddp005(lint, source: str) -> list[int]:
    return [line for line, code in lint(source, select=["DDP005"]) if code == "DDP005"]


def test_bare_barrier_before_set_device_in_the_same_function_is_reported_at_the_group_start(lint):
    assert _ddp005(
        lint,
        """
        import os
        import torch
        import torch.distributed as dist

        def run():
            dist.init_process_group("nccl")
            dist.barrier()
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
            model = Net().cuda()

        if __name__ == "__main__":
            run()
        """,
    ) == [6]


def test_cuda_placement_before_set_device_is_reported(lint):
    assert _ddp005(
        lint,
        """
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        warmup = torch.ones(4).cuda()
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        """,
    ) == [5]


def test_a_late_framework_device_setter_after_a_barrier_on_some_ranks_is_reported(lint):
    # Every rank but rank 0 waits at the barrier on GPU 0; the engine sets the device later.
    assert _ddp005(
        lint,
        """
        import deepspeed
        import torch.distributed as dist

        def train(args, net, data):
            deepspeed.init_distributed()
            if dist.get_rank() != 0:
                dist.barrier()
            engine, _, _, _ = deepspeed.initialize(args=args, model=net, training_data=data)

        train(parse(), Net(), load())
        """,
    ) == [5]


def test_a_helper_of_the_file_that_does_current_device_work_counts_as_that_work(lint):
    assert _ddp005(
        lint,
        """
        import os
        import torch
        import torch.distributed as dist

        def wait_for_all():
            torch.cuda.synchronize()

        def main():
            dist.init_process_group("nccl")
            wait_for_all()
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))

        main()
        """,
    ) == [9]


def test_a_project_barrier_helper_before_set_device_is_reported(tmp_path):
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    write_files(
        tmp_path,
        {
            "comm.py": "import torch.distributed as dist\ndef sync():\n    if dist.is_initialized():\n        dist.barrier()\n",
            "train.py": (
                "import os\nimport torch\nimport torch.distributed as dist\nfrom comm import sync\n"
                "def main():\n    sync()\n    torch.cuda.set_device(int(os.environ['LOCAL_RANK']))\n"
                "if __name__ == '__main__':\n    dist.init_process_group('nccl')\n    main()\n"
            ),
        },
    )
    found = [(d.location.row, d.code) for d in lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP005"]])]
    assert found == [(9, "DDP005")]


# -- left alone ------------------------------------------------------------------------------------


def test_set_device_before_the_work_is_left_alone(lint):
    assert _ddp005(
        lint,
        """
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        dist.barrier()
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        """,
    ) == []


def test_set_device_in_an_earlier_called_helper_counts_as_before(lint):
    assert _ddp005(
        lint,
        """
        import os
        import torch
        import torch.distributed as dist

        def setup():
            dist.init_process_group("nccl")
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))

        def main():
            setup()
            dist.barrier()
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))

        main()
        """,
    ) == []


def test_set_device_by_the_caller_before_calling_the_function_counts_as_before(lint):
    assert _ddp005(
        lint,
        """
        import os
        import torch
        import torch.distributed as dist

        def train():
            dist.barrier()
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))

        if __name__ == "__main__":
            dist.init_process_group("nccl")
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
            train()
        """,
    ) == []


def test_work_on_an_explicit_rank_device_before_set_device_is_left_alone(lint):
    assert _ddp005(
        lint,
        """
        import os
        import torch
        import torch.distributed as dist

        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl")
        model = Net().cuda(local_rank)
        batch = batch.to(torch.device("cuda", local_rank))
        dist.barrier(device_ids=[local_rank])
        torch.cuda.set_device(local_rank)
        """,
    ) == []


def test_gloo_run_is_left_alone(lint):
    assert _ddp005(
        lint,
        """
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group("gloo")
        dist.barrier()
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        """,
    ) == []


def test_work_only_on_rank_zero_or_the_single_process_path_is_left_alone(lint):
    assert _ddp005(
        lint,
        """
        import os
        import torch
        import torch.distributed as dist

        def main(distributed):
            if not distributed:
                torch.cuda.synchronize()
                return
            dist.init_process_group("nccl")
            if dist.get_rank() == 0:
                torch.cuda.synchronize()
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))

        main(True)
        """,
    ) == []


def test_set_device_in_another_arm_or_in_a_loop_around_the_work_is_left_alone(lint):
    # The order cannot be told: a loop's next pass runs the work after the set.
    assert _ddp005(
        lint,
        """
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        for step in range(10):
            torch.cuda.synchronize()
            if step == 0:
                torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        """,
    ) == []


def test_set_device_in_another_method_that_may_run_first_is_left_alone(lint):
    # The caller runs setup() before prepare(): the file does not show that order, so the
    # engine's later device choice in prepare() is not taken as the first one.
    assert _ddp005(
        lint,
        """
        import os
        import deepspeed
        import torch

        class Strategy:
            def setup(self):
                torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
                deepspeed.init_distributed()

            def prepare(self, model):
                torch.cuda.empty_cache()
                engine, *_ = deepspeed.initialize(model=model)
                return engine
        """,
    ) == []
