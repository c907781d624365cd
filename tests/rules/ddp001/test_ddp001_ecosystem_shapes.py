"""DDP001 on shapes seen in the ecosystem check: a notebook that pins its local rank to the
single-process value. Each is checked on what the rule must leave alone and on the nearest case it
must still flag. Written in our own words."""

from __future__ import annotations

# -- DDP001: a notebook that pins its local rank to the single-process value -------------------

_PINNED_NOTEBOOK = """
import torch
from torch.utils.data import DataLoader, Dataset, RandomSampler


class Tokens(Dataset):
    def __init__(self, args, split):
        if args.local_rank not in [-1, 0] and split == "train":
            torch.distributed.barrier()  # copied from a launcher script
        self.rows = load_rows(split)
        if args.local_rank == 0 and split == "train":
            torch.distributed.barrier()


class Options(dict):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.__dict__ = self


args = Options({"local_rank": -1, "max_len": 512})
train_set = Tokens(args, "train")
loader = DataLoader(train_set, sampler=RandomSampler(train_set), batch_size=16)
for batch in loader:
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
"""


def test_barriers_under_rank_tests_a_pinned_minus_one_never_passes_are_left_alone(lint):
    assert lint(_PINNED_NOTEBOOK, ["DDP001"]) == []


def test_rank_that_a_launcher_can_fill_still_flags(lint):
    from_launcher = _PINNED_NOTEBOOK.replace(
        'args = Options({"local_rank": -1, "max_len": 512})',
        'import argparse\np = argparse.ArgumentParser()\np.add_argument("--local_rank", type=int, default=-1)\n'
        "args = p.parse_args()",
    )
    assert lint(from_launcher, ["DDP001"]) == [(25, "DDP001")]


def test_rank_pinned_to_minus_one_but_a_barrier_outside_any_guard_still_flags(lint):
    unguarded = _PINNED_NOTEBOOK.replace(
        'train_set = Tokens(args, "train")', 'torch.distributed.barrier()\ntrain_set = Tokens(args, "train")'
    )
    assert lint(unguarded, ["DDP001"]) == [(23, "DDP001")]


def test_rank_guard_that_does_run_for_minus_one_keeps_its_calls(lint):
    # `local_rank in [-1, 0]` holds for -1: the barrier in its body runs, so the file is distributed.
    runs = _PINNED_NOTEBOOK.replace("if args.local_rank == 0 and", "if args.local_rank in [-1, 0] and")
    assert lint(runs, ["DDP001"]) == [(22, "DDP001")]
