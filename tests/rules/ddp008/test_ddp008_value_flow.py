"""DDP008 where it depends on what a value is where it is used, in program order, and on which
scripts are distributed: loads of per-rank or CPU-saved files, loads nothing calls, and rank getters
of process groups. Every shape is tested on what must be flagged and on what must be left alone."""

from __future__ import annotations

# -- DDP008: tensors restored onto another rank's GPU ---------------------------------------------
_LOADER_SCRIPT = """
    import os
    import torch
    import torch.distributed as dist

    def main(args):
        dist.init_process_group("nccl")
        rank = dist.get_rank()
        {body}

    if __name__ == "__main__":
        main(parse())
    """


def test_load_of_a_per_rank_file_is_silent(lint):
    own = 'state = torch.load(os.path.join(args.out, f"queue{rank}.pth"))'
    shared = 'state = torch.load(os.path.join(args.out, "queue.pth"))'
    assert lint(_LOADER_SCRIPT.format(body=own), ["DDP008"]) == []
    assert lint(_LOADER_SCRIPT.format(body=shared), ["DDP008"]) == [(8, "DDP008")]


def test_load_of_a_file_saved_from_cpu_tensors_is_silent(lint):
    saved = """
    import os
    import torch
    import torch.distributed as dist

    def dump(features, folder):
        torch.save(features.{move}, os.path.join(folder, "trainfeat.pth"))

    def main(args):
        dist.init_process_group("nccl")
        dump(extract(), args.out)
        features = torch.load(os.path.join(args.out, "trainfeat.pth"))

    if __name__ == "__main__":
        main(parse())
    """
    assert lint(saved.format(move="cpu()"), ["DDP008"]) == []
    assert lint(saved.format(move="cuda()"), ["DDP008"]) == [(11, "DDP008")]


def test_load_in_a_function_nothing_calls_is_silent(lint):
    source = """
    import torch
    import torch.distributed as dist

    def old_resume(path):
        return torch.load(path)

    def main(args):
        dist.init_process_group("nccl")
        {call}

    if __name__ == "__main__":
        main(parse())
    """
    assert lint(source.format(call="pass"), ["DDP008"]) == []
    assert lint(source.format(call="state = old_resume(args.ckpt)"), ["DDP008"]) == [(5, "DDP008")]


def test_rank_getter_of_a_parallel_group_is_a_rank(lint):
    source = """
        import torch
        import torch.distributed as dist

        def load_buffers(mpu, filename):
            dist.init_process_group("nccl")
            dp_rank = mpu.{getter}()
            if dp_rank == 0:
                state = torch.load(filename)
        """
    assert lint(source.format(getter="get_data_parallel_rank"), ["DDP008"]) == []
    assert lint(source.format(getter="get_data_parallel_size"), ["DDP008"]) == [(8, "DDP008")]


def test_pytest_class_without_importing_pytest_is_test_code(lint):
    source = """
        import torch
        import torch.distributed as dist

        class {name}:
            def test_saved_grads(self, tmp_path):
                dist.init_process_group("gloo")
                state = torch.load(tmp_path / "grads.pth")
        """
    assert lint(source.format(name="TestCheckpoint"), ["DDP008"]) == []
    assert lint(source.format(name="Checkpointer"), ["DDP008"]) == [(7, "DDP008")]


def test_rank_in_a_process_group_object(lint):
    source = """
        import torch
        import torch.distributed as dist

        class Optimizer:
            def load_state(self, filename):
                dist.barrier()
                if self.{owner}.rank() == 0:
                    return torch.load(filename)
        """
    assert lint(source.format(owner="data_parallel_group"), ["DDP008"]) == []
    assert lint(source.format(owner="scheduler"), ["DDP008"]) == [(8, "DDP008")]
