"""DDP008 on constructs found in real, public training scripts that once misled ddplint (false
positives) or hid a real bug from it (misses). Each is written from scratch to reproduce the
construct; the fix for each lives in the shared analysis, not in a rule. See docs/precision.md."""

from __future__ import annotations


def test_load_without_map_location_in_the_all_gpus_arm(lint):
    # MoCo's resume: without a GPU index the process drives all GPUs and loads as saved; with one
    # it maps to that GPU. The author chose per case.
    assert lint(
        """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        if args.gpu is None:
            checkpoint = torch.load(args.resume)
        else:
            checkpoint = torch.load(args.resume, map_location=f"cuda:{args.gpu}")
        """,
        ["DDP008"],
    ) == []


def test_load_inside_a_graph_library_dataset_class(lint):
    # A document-graph dataset derived from a graph library's Dataset reads one processed file
    # per item: data, saved from CPU tensors.
    assert lint(
        """
        import torch
        import torch.distributed as dist
        from pathlib import Path
        from torch_geometric.data import Dataset

        class DocGraphs(Dataset):
            def get(self, idx):
                return torch.load(Path(self.processed_dir) / f"data_{idx}.pt")

        dist.init_process_group("nccl")
        """,
        ["DDP008"],
    ) == []
