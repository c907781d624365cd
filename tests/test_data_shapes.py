"""The shapes real training code is written in, for the data rules (DDP001, DDP002, DDP004,
DDP006, DDP009, DDP011, DDP012): what each must flag and what it must leave alone. Snippets
are our own, written after shapes seen in public repositories."""

from __future__ import annotations

import textwrap

import pytest

from ddplint.engine import lint_source
from ddplint.rules import select_rules


def messages(source: str, code: str) -> list[tuple[int, str]]:
    """(row, the message and the finding's why, as `--output-format full` shows them)."""
    diagnostics = lint_source(textwrap.dedent(source).lstrip("\n"), "snippet.py", select_rules([code]))
    return sorted((d.location.row, f"{d.message}\n{d.explanation}") for d in diagnostics if d.code == code)


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
    return messages(PREAMBLE + textwrap.dedent(body), "DDP004")


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
    found = messages(
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
    found = messages(
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


# -- epochs that are not a `for epoch` loop (DDP002) ------------------------------------------------

LOADER = """
import itertools
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

dist.init_process_group("nccl")
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, batch_size=32, sampler=sampler)
"""


def ddp002(body: str) -> list[tuple[int, str]]:
    return messages(LOADER + textwrap.dedent(body), "DDP002")


def test_cycle_replays_the_first_pass_even_with_set_epoch():
    found = ddp002(
        """
        sampler.set_epoch(0)
        batches = itertools.cycle(loader)
        for step in range(max_steps):
            images, labels = next(batches)
            criterion(model(images), labels).backward()
            optimizer.step()
        """
    )
    assert [row for row, _ in found] == [10]  # the cycle() call
    assert "itertools.cycle()" in found[0][1] and "set_epoch() cannot change" in found[0][1]


def test_cycle_over_an_evaluation_loader_is_left_alone():
    assert messages(
        """
        import itertools
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        dist.init_process_group("nccl")
        val_loader = DataLoader(val_set, batch_size=32, sampler=DistributedSampler(val_set))
        val_batches = itertools.cycle(val_loader)
        """,
        "DDP002",
    ) == []


def test_an_iterator_recreated_when_exhausted_starts_an_unseeded_pass():
    found = ddp002(
        """
        batches = iter(loader)
        for step in range(max_steps):
            try:
                images, labels = next(batches)
            except StopIteration:
                batches = iter(loader)
                images, labels = next(batches)
            criterion(model(images), labels).backward()
            optimizer.step()
        """
    )
    assert [row for row, _ in found] == [10]
    assert "new passes over a loader" in found[0][1]


def test_a_recreated_iterator_after_set_epoch_is_left_alone():
    assert ddp002(
        """
        passes = 0
        batches = iter(loader)
        for step in range(max_steps):
            try:
                images, labels = next(batches)
            except StopIteration:
                passes += 1
                sampler.set_epoch(passes)
                batches = iter(loader)
                images, labels = next(batches)
            criterion(model(images), labels).backward()
            optimizer.step()
        """
    ) == []


def test_one_pass_through_an_iterator_is_left_alone():
    assert ddp002(
        """
        batches = iter(loader)
        for step in range(len(loader)):
            images, labels = next(batches)
            criterion(model(images), labels).backward()
            optimizer.step()
        """
    ) == []


def test_an_endless_generator_without_set_epoch():
    found = ddp002(
        """
        def endless(source):
            while True:
                for batch in source:
                    yield batch

        stream = endless(loader)
        for step in range(max_steps):
            images, labels = next(stream)
            criterion(model(images), labels).backward()
            optimizer.step()
        """
    )
    assert [row for row, _ in found] == [10]


def test_an_endless_generator_that_sets_the_epoch_is_left_alone():
    assert ddp002(
        """
        def endless(source, source_sampler):
            epoch = 0
            while True:
                source_sampler.set_epoch(epoch)
                for batch in source:
                    yield batch
                epoch += 1

        stream = endless(loader, sampler)
        for step in range(max_steps):
            images, labels = next(stream)
            criterion(model(images), labels).backward()
            optimizer.step()
        """
    ) == []


@pytest.mark.parametrize(
    "body",
    [
        # returned in a tuple with other things
        """
        def build(train_set):
            train_sampler = DistributedSampler(train_set)
            return DataLoader(train_set, batch_size=32, sampler=train_sampler), train_set, collate

        train_loader, dataset, collate_fn = build(train_set)
        for epoch in range(epochs):
            for images, labels in train_loader:
                criterion(model(images), labels).backward()
                optimizer.step()
        """,
        # unpacked from a conditional tuple
        """
        sampler, shuffle = (DistributedSampler(train_set), False) if distributed else (None, True)
        train_loader = DataLoader(train_set, batch_size=32, sampler=sampler, shuffle=shuffle)
        for epoch in range(epochs):
            for images, labels in train_loader:
                criterion(model(images), labels).backward()
                optimizer.step()
        """,
        # kept in a dict of loaders
        """
        loaders = {"train": DataLoader(train_set, batch_size=32, sampler=DistributedSampler(train_set))}
        for epoch in range(epochs):
            for images, labels in loaders["train"]:
                criterion(model(images), labels).backward()
                optimizer.step()
        """,
        # handed to the function that runs the epochs
        """
        def fit(model, data, epochs):
            for epoch in range(epochs):
                for images, labels in data:
                    criterion(model(images), labels).backward()
                    optimizer.step()

        fit(model, DataLoader(train_set, batch_size=32, sampler=DistributedSampler(train_set)), 10)
        """,
    ],
)
def test_loaders_that_travel_in_containers_and_arguments(body):
    source = "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
    source += 'dist.init_process_group("nccl")\n' + textwrap.dedent(body)
    assert len(messages(source, "DDP002")) == 1


# -- DDP001: a sampler built but not passed; DataLoader drop-ins --------------------------------------

TRAIN_LOOP = """
for epoch in range(epochs):
    for images, labels in loader:
        criterion(model(images), labels).backward()
        optimizer.step()
"""


def ddp001(body: str) -> list[tuple[int, str]]:
    head = "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
    head += 'dist.init_process_group("nccl")\n'
    return messages(head + textwrap.dedent(body) + TRAIN_LOOP, "DDP001")


def test_a_sampler_built_but_never_passed_is_named():
    found = ddp001(
        """
        train_sampler = DistributedSampler(train_set)
        loader = DataLoader(train_set, batch_size=32, shuffle=True)
        """
    )
    assert len(found) == 1
    assert "`train_sampler = DistributedSampler(train_set)`" in found[0][1]
    assert "never passed to this DataLoader" in found[0][1]
    assert found[0][1].startswith("`train_sampler` is built but never passed to `loader`:")


def test_a_sampler_for_another_dataset_does_not_count_as_unpassed():
    found = ddp001(
        """
        val_sampler = DistributedSampler(val_set)
        loader = DataLoader(train_set, batch_size=32, shuffle=True)
        """
    )
    assert len(found) == 1 and "never passed" not in found[0][1]


def test_the_unpassed_sampler_fix_passes_it():
    from ddplint.fix import fix_until_stable

    source = (
        "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
        'dist.init_process_group("nccl")\n'
        "train_sampler = DistributedSampler(train_set)\n"
        "loader = DataLoader(train_set, batch_size=32, shuffle=True)\n" + TRAIN_LOOP
    )
    rules = select_rules(["DDP001"])
    outcome = fix_until_stable(source, lambda text: lint_source(text, "snippet.py", rules), unsafe=True)
    text = outcome.source
    assert "DataLoader(train_set, batch_size=32, sampler=train_sampler)" in text


def test_a_dataloader_subclass_of_the_file_is_a_loader():
    found = ddp001(
        """
        class PrefetchLoader(DataLoader):
            def __init__(self, dataset, **kwargs):
                super().__init__(dataset, pin_memory=True, **kwargs)

        loader = PrefetchLoader(train_set, batch_size=32, shuffle=True)
        """
    )
    assert len(found) == 1


def test_a_dataloader_subclass_that_brings_its_own_sampler_is_left_alone():
    assert ddp001(
        """
        class ShardedLoader(DataLoader):
            def __init__(self, dataset, **kwargs):
                super().__init__(dataset, sampler=DistributedSampler(dataset), **kwargs)

        loader = ShardedLoader(train_set, batch_size=32)
        """
    ) == []


def test_stateful_dataloader_is_a_dataloader():
    found = ddp001(
        """
        from torchdata.stateful_dataloader import StatefulDataLoader
        loader = StatefulDataLoader(train_set, batch_size=32, shuffle=True)
        """
    )
    assert len(found) == 1
    assert ddp001(
        """
        from torchdata.stateful_dataloader import StatefulDataLoader
        loader = StatefulDataLoader(train_set, batch_size=32, sampler=DistributedSampler(train_set))
        """
    ) == []


# -- evaluation loaders recognised by what the code does (DDP002) -------------------------------------


def test_a_loader_built_by_a_shared_helper_and_only_evaluated_is_left_alone():
    # The helper wraps the loader in a generator; the only pass runs the model frozen, never
    # stepping it, once per epoch.
    source = """
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler

    def make_batches(dataset):
        return (batch for batch in DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset)))

    def held_out_loss(model, epoch):
        model.eval()
        total = 0.0
        for batch in make_batches(load_split(epoch)):
            total += model(batch).item()
        return total

    dist.init_process_group("nccl")
    for epoch in range(epochs):
        train_one_epoch(model)
        held_out_loss(model, epoch)
    """
    assert messages(source, "DDP002") == []


def test_the_same_helper_feeding_a_training_pass_is_reported():
    source = """
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler

    def make_batches(dataset):
        return (batch for batch in DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset)))

    dist.init_process_group("nccl")
    for epoch in range(epochs):
        for batch in make_batches(train_set):  # a new sampler each epoch, with the same seed
            model(batch).backward()
            optimizer.step()
    """
    assert [row for row, _ in messages(source, "DDP002")] == [8]


# -- DDP001 in tests that give every rank the same data on purpose ------------------------------------

SAME_DATA_TEST = """
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

def _worker(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    inputs, targets = torch.randn(64, 10), torch.randn(64, 1)
    loader = DataLoader(TensorDataset(inputs, targets), batch_size=8, shuffle=True)
    model = DDP(torch.nn.Linear(10, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    {check}

def test_every_rank_ends_with_the_reference_weights():
    mp.spawn(_worker, args=(2,), nprocs=2)
"""


def test_a_test_that_gives_every_rank_the_same_made_up_data_is_left_alone():
    source = SAME_DATA_TEST.replace("{check}", "assert torch.allclose(model.module.weight, expected_weight())")
    assert messages(source, "DDP001") == []


def test_the_same_made_up_data_without_any_check_is_reported():
    # a demo script, not a test: nothing compares the result
    source = SAME_DATA_TEST.replace("{check}", "print(model.module.weight)")
    assert len(messages(source, "DDP001")) == 1


def test_a_test_over_a_real_dataset_is_still_reported():
    source = SAME_DATA_TEST.replace(
        "inputs, targets = torch.randn(64, 10), torch.randn(64, 1)", "inputs, targets = torch.load(args.data)"
    ).replace("{check}", "assert torch.isfinite(model.module.weight).all()")
    assert len(messages(source, "DDP001")) == 1


@pytest.mark.parametrize(
    "made_up",
    [
        "inputs, targets = torch.randn(n_samples, dim), torch.empty(n_samples, dtype=torch.long).random_(dim)",
        "inputs, targets = torch.rand(*shape), torch.zeros(len(shape))",
    ],
)
def test_random_tensors_are_made_up_whatever_sizes_they_are_given(made_up):
    # a benchmark or test whose sizes are options: the content is still random numbers
    source = SAME_DATA_TEST.replace("inputs, targets = torch.randn(64, 10), torch.randn(64, 1)", made_up)
    assert messages(source.replace("{check}", "assert torch.isfinite(model.module.weight).all()"), "DDP001") == []
    assert len(messages(source.replace("{check}", "print(model.module.weight)"), "DDP001")) == 1


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


def test_a_jax_program_that_reads_local_rank_is_not_a_torch_distributed_script():
    source = """
    import os
    import jax
    import torch

    local_rank = int(os.environ.get("LOCAL_RANK", -1))
    loader = torch.utils.data.DataLoader(train_set, batch_size=8, shuffle=True)
    step = jax.pmap(train_step, "batch")
    for epoch in range(epochs):
        for batch in loader:
            state = step(state, shard(batch))
    """
    assert messages(source, "DDP001") == []
    # the same torch program is one
    torch_only = source.replace("    import jax\n", "").replace('jax.pmap(train_step, "batch")', "train_step")
    torch_only = torch_only.replace("state = step(state, shard(batch))", "loss_of(batch).backward()")
    assert len(messages(torch_only, "DDP001")) == 1


def test_a_loader_reassigned_from_accelerator_prepare_among_other_objects_is_left_alone():
    source = """
    import os
    import torch
    from accelerate import Accelerator

    local_rank = int(os.environ.get("LOCAL_RANK", -1))
    accelerator = Accelerator()
    train_dataloader = torch.utils.data.DataLoader(train_dataset, batch_size=4, shuffle=True)
    steps = len(train_dataloader) // accelerator.num_processes
    encoder_a, encoder_b, optimizer, train_dataloader, scheduler = accelerator.prepare(
        encoder_a, encoder_b, optimizer, train_dataloader, scheduler
    )
    for epoch in range(epochs):
        for batch in train_dataloader:
            accelerator.backward(loss_of(batch))
            optimizer.step()
    """
    assert messages(source, "DDP001") == []


def test_ddp012_is_silent_in_a_pytest_test_that_feeds_a_gpu_model():
    source = """
    import pytest
    import torch
    from torch.utils.data import DataLoader

    def test_training_step_reduces_the_loss():
        loader = DataLoader(load_corpus_split("train"), batch_size=2, shuffle=True)
        model = build_model().cuda()
        for batch in loader:
            model(batch.cuda()).backward()
            optimizer.step()
        assert final_loss(model) < initial
    """
    assert messages(source, "DDP012") == []
    script = source.replace("import pytest\n    ", "").replace("def test_training_step_reduces_the_loss", "def main")
    assert len(messages(script, "DDP012")) == 1


@pytest.mark.parametrize(
    "build",
    [
        "kw = {'batch_size': 8}\nkw['sampler'] = DistributedSampler(ds)\nloader = DataLoader(ds, **kw)\n",
        "kw = dict(batch_size=8, sampler=DistributedSampler(ds))\nloader = DataLoader(ds, **kw)\n",
        # the dict is built by a helper that sets the sampler on it
        "def loader_kwargs(ds):\n    kwargs = {}\n    kwargs['sampler'] = DistributedSampler(ds)\n"
        "    return kwargs\nloader = DataLoader(ds, **loader_kwargs(ds))\n",
    ],
)
def test_a_sampler_passed_in_a_kwargs_dict_reaches_its_loader(build):
    head = "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
    head += 'dist.init_process_group("nccl")\n'
    source = head + build + TRAIN_LOOP
    assert messages(source, "DDP001") == []  # the sampler is there
    assert len(messages(source, "DDP002")) == 1  # and never gets set_epoch
    with_epoch = source.replace("for epoch in range(epochs):\n", "for epoch in range(epochs):\n    loader.sampler.set_epoch(epoch)\n")
    assert messages(with_epoch, "DDP002") == []


def test_a_sampler_set_on_another_dict_does_not_count():
    head = "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
    head += 'dist.init_process_group("nccl")\n'
    build = "kw = {'batch_size': 8}\nother = {}\nother['sampler'] = DistributedSampler(ds)\nloader = DataLoader(ds, **kw)\n"
    assert len(messages(head + build + TRAIN_LOOP, "DDP001")) == 1


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
    found = messages(
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


def test_a_tensor_parallel_script_shares_batches_across_its_group():
    source = """
    import torch.distributed as dist
    from megatron.core import parallel_state
    from torch.utils.data import DataLoader

    dist.init_process_group("nccl")
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=2, pipeline_model_parallel_size=1)
    loader = DataLoader(train_set, batch_size=8, shuffle=True)
    for epoch in range(epochs):
        for batch in loader:
            model(batch).backward()
            optimizer.step()
    """
    assert messages(source, "DDP001") == []
    plain = source.replace(
        "parallel_state.initialize_model_parallel(tensor_model_parallel_size=2, pipeline_model_parallel_size=1)",
        "parallel_state.destroy_model_parallel()",
    )
    assert len(messages(plain, "DDP001")) == 1


def test_a_sampler_handed_each_epoch_to_an_imported_function_is_left_alone():
    source = LOADER + textwrap.dedent(
        """
        from engine import train

        for epoch in range(epochs):
            train(model, loader, optimizer, epoch, sampler=sampler)
        """
    )
    assert messages(source, "DDP002") == []
    # handing over only the loader (a wrapper around the sampler) says nothing about set_epoch
    only_loader = source.replace("train(model, loader, optimizer, epoch, sampler=sampler)", "train(model, tqdm(loader))")
    assert len(messages(only_loader, "DDP002")) == 1


# -- per-rank buffers and DeepSpeed scripts (DDP001) ------------------------------------------------

ROLLOUTS = """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader

dist.init_process_group("nccl")


class PPOTrainer:
    def __init__(self, model):
        self.model = model
        self.replay_buffer = ReplayBuffer(capacity=4096)

    def train_on_rollouts(self):
        loader = DataLoader(self.replay_buffer, batch_size=8, shuffle=True)
        for epoch in range(2):
            for batch in loader:
                self.model(batch).backward()


class Actor:
    def __init__(self, model):
        self.trainer = PPOTrainer(model)

    def collect(self, prompts):
        for prompt in prompts:
            self.trainer.replay_buffer.append(self.trainer.model.generate(prompt))
        self.trainer.train_on_rollouts()
"""


def test_a_buffer_of_the_ranks_own_rollouts_is_left_alone():
    # Each rank trains on the experience it generated itself: shuffling it locally is right, and a
    # DistributedSampler would throw most of it away.
    assert messages(ROLLOUTS, "DDP001") == []


def test_a_buffer_attribute_nobody_grows_is_still_reported():
    never_grown = ROLLOUTS.replace("self.trainer.replay_buffer.append(", "print(")
    assert len(messages(never_grown, "DDP001")) == 1


def test_a_deepspeed_script_is_distributed():
    # deepspeed.initialize starts the process group itself; the loader the script builds by hand
    # is not the one DeepSpeed would shard (that one comes from training_data=).
    source = """
    import deepspeed
    import torch
    from torch.utils.data import DataLoader

    def train(args, dataset, model):
        loader = DataLoader(dataset, batch_size=64, shuffle=True)
        engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
        for epoch in range(args.epochs):
            for batch in loader:
                engine.backward(engine(batch))
                engine.step()

    train(parse_args(), build_dataset(), Net())
    """
    assert len(messages(source, "DDP001")) == 1
    handed_over = source.replace("model_parameters=model.parameters())", "training_data=dataset)")
    assert messages(handed_over, "DDP001") == []


FIXED_EPOCH = """
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

dist.init_process_group("nccl")
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, batch_size=32, sampler=sampler)
for epoch in range(epochs):
    sampler.set_epoch({epoch})
    for batch in loader:
        model(batch).backward()
        optimizer.step()
"""


def test_set_epoch_given_a_written_number_replays_the_same_order():
    found = messages(FIXED_EPOCH.replace("{epoch}", "0"), "DDP002")
    assert len(found) == 1
    assert "gets the same epoch every time (`sampler.set_epoch(0)`)" in found[0][1]
    assert found[0][1].startswith("`sampler.set_epoch(0)` gives the sampler the same epoch every time")


@pytest.mark.parametrize("epoch", ["epoch", "epoch + start_epoch", "args.start_epoch + epoch"])
def test_set_epoch_given_the_epoch_is_left_alone(epoch):
    assert messages(FIXED_EPOCH.replace("{epoch}", epoch), "DDP002") == []


def test_a_written_number_once_before_the_loop_does_not_hide_the_real_call():
    source = FIXED_EPOCH.replace("{epoch}", "epoch").replace(
        "for epoch in range(epochs):", "sampler.set_epoch(0)\nfor epoch in range(epochs):"
    )
    assert messages(source, "DDP002") == []
