"""DDP004 on constructs found in real, public training scripts that once misled ddplint (false
positives) or hid a real bug from it (misses). Each is written from scratch to reproduce the
construct; the fix for each lives in the shared analysis, not in a rule. See docs/precision.md."""

from __future__ import annotations


def test_helper_module_that_only_calls_collectives_is_distributed(lint):
    assert lint(
        """
        import torch.distributed as dist
        from datasets import load_dataset

        def build():
            if dist.get_rank() == 0:
                data = load_dataset("json", data_files="train.jsonl")
            else:
                data = None
            objs = [data]
            dist.broadcast_object_list(objs, src=0)
            return objs[0]
        """
    ) == [(5, "DDP004")]


def test_leader_rank_held_in_a_constant(lint):
    assert lint(
        """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        LEADER = 0

        def get_batches(rank, world_size, tokenizer, texts):
            out = torch.zeros(8, 16, dtype=torch.long)
            if rank == LEADER:
                parts = [torch.tensor(tokenizer(texts[i::world_size])) for i in range(world_size)]
            else:
                parts = None
            dist.scatter(out, parts, src=LEADER)
            return out
        """
    ) == [(9, "DDP004")]


def test_leader_rank_from_an_attribute_still_one_rank(lint):
    # A leader rank held on self: the leader alone loads and tokenizes, the others wait in
    # scatter; the leader's own DataLoader needs no DistributedSampler.
    assert lint(
        """
        import torch.distributed as dist
        from torch.utils.data import DataLoader

        class Feeder:
            def __init__(self, rank, leader_rank, world_size):
                dist.init_process_group("nccl")
                self.rank, self.leader_rank, self.world_size = rank, leader_rank, world_size

            def next_shard(self, out):
                if self.rank == self.leader_rank:
                    loader = DataLoader(load_corpus("train.txt"), batch_size=512, shuffle=True)
                    parts = [tokenize(batch) for batch in loader]
                else:
                    parts = None
                dist.scatter(out, parts, src=self.leader_rank)
                return out
        """
    ) == [(10, "DDP004")]


def test_download_only_with_inline_transforms(lint):
    assert lint(
        """
        import os
        import torch
        import torch.distributed as dist
        from torchvision import datasets, transforms

        local_rank = int(os.getenv("LOCAL_RANK", 0))
        dist.init_process_group("nccl")
        torch.cuda.set_device(local_rank)  # the bare barrier below runs on this GPU
        if local_rank == 0:
            dataset = datasets.FashionMNIST("./data", train=True, download=True, transform=transforms.ToTensor())
        dist.barrier()
        dataset = datasets.FashionMNIST("./data", train=True, download=False, transform=transforms.ToTensor())
        """
    ) == []


def test_conditional_expression_inside_the_collective_call(lint):
    assert lint(
        """
        import torch.distributed as dist

        dist.init_process_group("gloo")
        rank = dist.get_rank()
        payload = [load_and_tokenize("train.jsonl") if rank == 0 else None]
        dist.broadcast_object_list(payload, src=0)
        """
    ) == [(5, "DDP004")]
    assert lint(
        """
        import torch.distributed as dist

        dist.init_process_group("gloo")
        objects = [load_dataset_file("a.pt") if dist.get_rank() == 0 else None]; dist.broadcast_object_list(objects)
        """
    ) == [(4, "DDP004")]


def test_rank_zero_downloads_through_helpers_then_every_rank_builds(lint):
    # salesforce/LAVIS dataset builder: rank 0 fetches annotation files into the cache (through
    # two helper methods ending in torchvision's download_url), a barrier, then every rank builds.
    assert lint(
        """
        import os
        import torch.distributed as dist
        from torchvision.datasets.utils import download_url

        class Builder:
            def build_datasets(self):
                if dist.get_rank() == 0:
                    self._download_data()
                dist.barrier()
                return self.build()

            def _download_data(self):
                self._download_ann()

            def _download_ann(self):
                for url, path in self.urls:
                    download_url(url=url, root=os.path.dirname(path))
        """
    ) == []
