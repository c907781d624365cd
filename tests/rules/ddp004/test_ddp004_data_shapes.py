"""DDP004 on the shapes real training code is written in (rank-0 work that scales with the dataset,
named in the message): what it must flag and what it must leave alone. Snippets are our own, written
after shapes seen in public repositories."""

from __future__ import annotations

import textwrap

import pytest

from rule_snippets import rows_and_messages

# -- DDP004: work that scales with the dataset, named in the message ------------------------------

PREAMBLE = """
import json
import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from datasets import load_dataset

dist.init_process_group("nccl")
rank = dist.get_rank()
"""


def ddp004(body: str) -> list[tuple[int, str]]:
    return rows_and_messages(PREAMBLE + textwrap.dedent(body), "DDP004")


def test_rank_zero_maps_a_tokenizer_over_the_dataset():
    found = ddp004(
        """
        raw = load_dataset("json", data_files=args.train_file)["train"]
        if rank == 0:
            tokenized = raw.map(encode, batched=True, num_proc=16)
            tokenized.save_to_disk(args.cache_dir)
        dist.barrier()
        """
    )
    assert len(found) == 1
    assert "maps a function over the dataset (`raw.map(encode, batched=True, num_proc=16)`)" in found[0][1]
    assert "`barrier()`" in found[0][1]


def test_rank_zero_iterates_the_loader_to_compute_statistics():
    found = ddp004(
        """
        loader = DataLoader(train_set, batch_size=256)
        totals = torch.zeros(3)
        if rank == 0:
            for images, _ in loader:
                totals += images.mean(dim=(0, 2, 3))
        dist.broadcast(totals, src=0)
        """
    )
    assert len(found) == 1 and "iterates the loader (`for ... in loader`)" in found[0][1]


def test_a_file_read_counts_when_its_content_is_what_the_others_receive():
    found = ddp004(
        """
        box = [None]
        if rank == 0:
            features = torch.load(args.features_path)
            box = [features]
        dist.broadcast_object_list(box, src=0)
        """
    )
    assert len(found) == 1 and "reads a data file (`torch.load(args.features_path)`)" in found[0][1]


def test_a_helper_of_the_file_that_builds_the_dataset_is_named_as_preparing_it():
    found = rows_and_messages(
        """
        import torch.distributed as dist
        from torchvision import datasets

        def fetch(root):
            return datasets.ImageFolder(root)

        dist.init_process_group("nccl")
        shared = [None]
        if dist.get_rank() == 0:
            shared = [fetch(args.root)]
        dist.broadcast_object_list(shared, src=0)
        """,
        "DDP004",
    )
    assert len(found) == 1 and "prepares the data (`fetch(args.root)`)" in found[0][1]


@pytest.mark.parametrize(
    "body",
    [
        # converting a checkpoint once: a read whose result only rank 0 uses
        """
        if rank == 0:
            state = torch.load(args.source)
            torch.save(convert_keys(state), args.target)
        dist.barrier()
        """,
        # one generated sample for the log, from a literal prompt
        """
        if rank == 0:
            prompt = tokenizer("Once upon a time", return_tensors="pt")
            text = tokenizer.decode(model.generate(**prompt)[0])
            print(text)
        dist.barrier()
        """,
        # reference statistics read for a score on rank 0
        """
        if rank == 0:
            reference = np.load(args.reference_stats)
            score = frechet_distance(reference["mu"], reference["sigma"], mu, sigma)
            print(score)
        dist.barrier()
        """,
        # packing the run's outputs at exit
        """
        if rank == 0:
            create_archive_files(args.output_dir)
        dist.barrier()
        """,
        # a test's check on rank 0
        """
        if rank == 0:
            restored = torch.load(path)
            assert restored["weight"].shape == (4, 4)
        dist.barrier()
        """,
        # a tiny made-up dataset in a test
        """
        if rank == 0:
            fixture = TensorDataset(torch.randn(8, 3), torch.zeros(8))
            assert len(fixture) == 8
        dist.barrier()
        """,
        # a read whose result is not what is broadcast
        """
        seed = [0]
        if rank == 0:
            info = json.load(open(args.dataset_info))
            seed = [int(time.time())]
            print(info)
        dist.broadcast_object_list(seed, src=0)
        """,
        # rank 0 evaluates (DDP010's finding, not data work)
        """
        val_loader = DataLoader(val_set, batch_size=64)
        if rank == 0:
            model.eval()
            with torch.no_grad():
                for x, y in val_loader:
                    correct += (model(x).argmax(1) == y).sum()
        dist.barrier()
        """,
    ],
)
def test_rank_zero_work_that_does_not_scale_with_the_dataset_is_left_alone(body):
    assert ddp004(body) == []


def test_a_dataset_class_of_the_file_built_from_numbers_is_a_fixture():
    found = rows_and_messages(
        """
        import torch
        import torch.distributed as dist
        from torch.utils.data import Dataset

        class RandomTokens(Dataset):
            def __init__(self, size, length):
                self.data = torch.randint(0, 100, (size, length))

        dist.init_process_group("gloo")
        if dist.get_rank() == 0:
            fixture = RandomTokens(16, 8)
        dist.barrier()
        """,
        "DDP004",
    )
    assert found == []


def test_a_call_handed_the_tokenizer_counts_when_its_result_is_broadcast():
    found = ddp004(
        """
        box = [None]
        if rank == 0:
            box = [convert_examples_to_features(read_examples(args.train_file), tokenizer, 384)]
        dist.broadcast_object_list(box, src=0)
        """
    )
    assert len(found) == 1 and "tokenises the data (`convert_examples_to_features(...)`)" in found[0][1]
    # ... and not when rank 0 keeps the result for itself (one sample for the log)
    assert ddp004(
        """
        if rank == 0:
            print(sample_completion(model, tokenizer, max_new_tokens=50))
        dist.barrier()
        """
    ) == []


def test_rank_zero_of_each_model_parallel_group_building_the_data_is_left_alone():
    # every tensor-parallel group's first rank builds the loader its peers must share
    assert ddp004(
        """
        flags = torch.zeros(3)
        if mpu.get_tensor_model_parallel_rank() == 0:
            train_loader = build_pretraining_data_loader(train_ds, consumed)
            flags = torch.tensor([int(train_loader is not None), 0, 0])
        dist.broadcast(flags, src=0, group=mpu.get_tensor_model_parallel_group())
        """
    ) == []
    assert ddp004(
        """
        box = [None]
        if dist.get_rank(group=tp_group) == 0:
            box = [load_dataset("json", data_files=args.data)]
        dist.broadcast_object_list(box, group=tp_group, group_src=0)
        """
    ) == []


@pytest.mark.parametrize(
    "call",
    ["save_tokenizer_assets(args.save)", "get_tokenizer()", "verify_checkpoint_files(checkpoint_dir)"],
)
def test_tool_and_checkpoint_helpers_are_not_data_work(call):
    found = rows_and_messages(
        f"""
        import json
        import torch.distributed as dist

        def verify_checkpoint_files(folder):
            return json.load(open(folder + "/manifest.json"))

        dist.init_process_group("nccl")
        box = [None]
        if dist.get_rank() == 0:
            box = [{call}]
        dist.broadcast_object_list(box, src=0)
        """,
        "DDP004",
    )
    assert found == []


def test_a_call_of_the_tokenizer_itself_is_tokenising():
    found = ddp004(
        """
        box = [None]
        if rank == 0:
            box = [text_tokenizer(corpus_lines, truncation=True)]
        dist.broadcast_object_list(box, src=0)
        """
    )
    assert len(found) == 1 and "tokenises the data" in found[0][1]
