"""DDP001 for a loader factory of another module that picks its DataLoader by a parameter on the
run's mode (`def make_loader(ds, bs, distributed=False): if not distributed: return
DataLoader(ds, shuffle=True) ...`). Which loader the ranks get is the caller's value: one false in
a rank (`distributed=False`, nothing over a false default, `world_size == 1`) gives every rank
the single-process loader; one true there (`dist.is_initialized()`, `world_size > 1`, True)
gives the sharded one, whichever comes first in the factory."""

from __future__ import annotations

import pytest

from rule_snippets import write_files

FACTORY = """
    from torch.utils.data import DataLoader
    from orders import shard_order


    def make_loader(rows, size, distributed=False):
        {body}
    """

EARLY_RETURN = (
    "if not distributed:\n"
    "            return DataLoader(rows, batch_size=size, shuffle=True)\n"
    "        return DataLoader(rows, batch_size=size, sampler=shard_order(rows))"
)
IF_ELSE = (
    "if distributed:\n"
    "            made = DataLoader(rows, batch_size=size, sampler=shard_order(rows))\n"
    "        else:\n"
    "            made = DataLoader(rows, batch_size=size, shuffle=True)\n"
    "        return made"
)

ORDERS = """
    from torch.utils.data import DistributedSampler


    def shard_order(rows):
        return DistributedSampler(rows)
    """

SCRIPT = """
    import torch.distributed as dist
    from loading import make_loader

    dist.init_process_group("nccl")
    batches = make_loader(read_rows(), 16{mode})
    for epoch in range(6):
        batches.sampler.set_epoch(epoch)
        for x in batches:
            loss_of(x).backward()
            opt.step()
    """


def _findings(tmp_path, body, mode):
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    write_files(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'demo'\n",
            "loading.py": FACTORY.replace("{body}", body),
            "orders.py": ORDERS,
            "train.py": SCRIPT.replace("{mode}", mode),
        },
    )
    found = lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP001"]])
    return [(d.filename.rsplit("/", 1)[-1], d.location.row, d.code, d.message) for d in found]


@pytest.mark.parametrize("body", [EARLY_RETURN, IF_ELSE], ids=["early-return", "if-else"])
@pytest.mark.parametrize("mode", ["", ", distributed=False", ", False", ", dist.get_world_size() == 1"])
def test_mode_false_in_the_ranks_gets_the_single_process_loader(tmp_path, body, mode):
    ((name, row, code, message),) = _findings(tmp_path, body, mode)
    assert (name, row, code) == ("train.py", 5, "DDP001")
    assert "told the run is not distributed" in message


@pytest.mark.parametrize("body", [EARLY_RETURN, IF_ELSE], ids=["early-return", "if-else"])
@pytest.mark.parametrize(
    "mode", [", distributed=True", ", dist.is_initialized()", ", distributed=dist.get_world_size() > 1", ", args.distributed"]
)
def test_mode_true_in_the_ranks_gets_the_sharded_loader(tmp_path, body, mode):
    assert _findings(tmp_path, body, mode) == []


def test_mode_the_tool_cannot_read_is_taken_as_distributed(tmp_path):
    assert _findings(tmp_path, EARLY_RETURN, ", use_many") == []
