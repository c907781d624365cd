"""DDP001 on the shapes real training code is written in (a sampler built but never passed,
DataLoader drop-ins, tests that give every rank the same data on purpose, per-rank buffers and
DeepSpeed scripts): what it must flag and what it must leave alone. Snippets are our own, written
after shapes seen in public repositories."""

from __future__ import annotations

import textwrap

import pytest

from ddplint.engine import lint_source
from ddplint.rules import select_rules
from rule_snippets import rows_and_messages

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
    return rows_and_messages(head + textwrap.dedent(body) + TRAIN_LOOP, "DDP001")


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
    assert rows_and_messages(source, "DDP001") == []


def test_the_same_made_up_data_without_any_check_is_reported():
    # a demo script, not a test: nothing compares the result
    source = SAME_DATA_TEST.replace("{check}", "print(model.module.weight)")
    assert len(rows_and_messages(source, "DDP001")) == 1


def test_a_test_over_a_real_dataset_is_still_reported():
    source = SAME_DATA_TEST.replace(
        "inputs, targets = torch.randn(64, 10), torch.randn(64, 1)", "inputs, targets = torch.load(args.data)"
    ).replace("{check}", "assert torch.isfinite(model.module.weight).all()")
    assert len(rows_and_messages(source, "DDP001")) == 1


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
    assert rows_and_messages(source.replace("{check}", "assert torch.isfinite(model.module.weight).all()"), "DDP001") == []
    assert len(rows_and_messages(source.replace("{check}", "print(model.module.weight)"), "DDP001")) == 1


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
    assert rows_and_messages(source, "DDP001") == []
    # the same torch program is one
    torch_only = source.replace("    import jax\n", "").replace('jax.pmap(train_step, "batch")', "train_step")
    torch_only = torch_only.replace("state = step(state, shard(batch))", "loss_of(batch).backward()")
    assert len(rows_and_messages(torch_only, "DDP001")) == 1


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
    assert rows_and_messages(source, "DDP001") == []


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
    assert rows_and_messages(source, "DDP001") == []  # the sampler is there
    assert len(rows_and_messages(source, "DDP002")) == 1  # and never gets set_epoch
    with_epoch = source.replace("for epoch in range(epochs):\n", "for epoch in range(epochs):\n    loader.sampler.set_epoch(epoch)\n")
    assert rows_and_messages(with_epoch, "DDP002") == []


def test_a_sampler_set_on_another_dict_does_not_count():
    head = "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
    head += 'dist.init_process_group("nccl")\n'
    build = "kw = {'batch_size': 8}\nother = {}\nother['sampler'] = DistributedSampler(ds)\nloader = DataLoader(ds, **kw)\n"
    assert len(rows_and_messages(head + build + TRAIN_LOOP, "DDP001")) == 1


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
    assert rows_and_messages(source, "DDP001") == []
    plain = source.replace(
        "parallel_state.initialize_model_parallel(tensor_model_parallel_size=2, pipeline_model_parallel_size=1)",
        "parallel_state.destroy_model_parallel()",
    )
    assert len(rows_and_messages(plain, "DDP001")) == 1


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
    assert rows_and_messages(ROLLOUTS, "DDP001") == []


def test_a_buffer_attribute_nobody_grows_is_still_reported():
    never_grown = ROLLOUTS.replace("self.trainer.replay_buffer.append(", "print(")
    assert len(rows_and_messages(never_grown, "DDP001")) == 1


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
    assert len(rows_and_messages(source, "DDP001")) == 1
    handed_over = source.replace("model_parameters=model.parameters())", "training_data=dataset)")
    assert rows_and_messages(handed_over, "DDP001") == []
