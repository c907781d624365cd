"""DDP002 on the shapes real training code is written in (epochs that are not a `for epoch` loop and
evaluation loaders recognised by what the code does): what it must flag and what it must leave
alone. Snippets are our own, written after shapes seen in public repositories."""

from __future__ import annotations

import textwrap

import pytest

from rule_snippets import rows_and_messages

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
    return rows_and_messages(LOADER + textwrap.dedent(body), "DDP002")


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
    assert rows_and_messages(
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
    assert len(rows_and_messages(source, "DDP002")) == 1


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
    assert rows_and_messages(source, "DDP002") == []


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
    assert [row for row, _ in rows_and_messages(source, "DDP002")] == [8]


def test_a_sampler_handed_each_epoch_to_an_imported_function_is_left_alone():
    source = LOADER + textwrap.dedent(
        """
        from engine import train

        for epoch in range(epochs):
            train(model, loader, optimizer, epoch, sampler=sampler)
        """
    )
    assert rows_and_messages(source, "DDP002") == []
    # handing over only the loader (a wrapper around the sampler) says nothing about set_epoch
    only_loader = source.replace("train(model, loader, optimizer, epoch, sampler=sampler)", "train(model, tqdm(loader))")
    assert len(rows_and_messages(only_loader, "DDP002")) == 1


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
    found = rows_and_messages(FIXED_EPOCH.replace("{epoch}", "0"), "DDP002")
    assert len(found) == 1
    assert "gets the same epoch every time (`sampler.set_epoch(0)`)" in found[0][1]
    assert found[0][1].startswith("`sampler.set_epoch(0)` gives the sampler the same epoch every time")


@pytest.mark.parametrize("epoch", ["epoch", "epoch + start_epoch", "args.start_epoch + epoch"])
def test_set_epoch_given_the_epoch_is_left_alone(epoch):
    assert rows_and_messages(FIXED_EPOCH.replace("{epoch}", epoch), "DDP002") == []


def test_a_written_number_once_before_the_loop_does_not_hide_the_real_call():
    source = FIXED_EPOCH.replace("{epoch}", "epoch").replace(
        "for epoch in range(epochs):", "sampler.set_epoch(0)\nfor epoch in range(epochs):"
    )
    assert rows_and_messages(source, "DDP002") == []
