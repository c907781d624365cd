"""DDP007 across the modules of a project: the finding is judged where the code runs, whichever
module holds the helper it calls. Each case is a small project on disk."""

from __future__ import annotations

from rule_snippets import write_files


def test_collective_inside_a_helper_of_another_module(tmp_path):
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    write_files(
        tmp_path,
        {
            "dist_utils.py": """
                import torch.distributed as dist

                def reduce_mean(t):
                    dist.all_reduce(t)
                    return t / dist.get_world_size()

                def maybe_barrier(rank):
                    if rank != 0:
                        dist.barrier()
                """,
            "train.py": """
                import torch.distributed as dist
                from dist_utils import maybe_barrier, reduce_mean

                dist.init_process_group("nccl")
                rank = dist.get_rank()
                if rank == 0:
                    print(reduce_mean(loss))
                    maybe_barrier(rank)
                """,
        },
    )
    found = list(lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP007"]]))
    assert [(d.location.row, "reduce_mean" in d.message) for d in found] == [(7, True)]
