"""DDP005 and where code runs (issue 20, item 3): a finding about ranks needs its code to run in a
rank. Each shape comes twice: left alone where the code runs in one process only, flagged where the
same lines run in every spawned or launched rank (the launching process before and after `mp.spawn`,
the single-process path beside the launcher, classes nobody builds, test classes, `set_device(0)` in
a spawned worker or under an outside launcher). Expected findings are marked `# <- DDP005` on their
line."""

from __future__ import annotations

import libcst as cst
import pytest

from ddplint.analysis.facts import build_facts
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.where import Where
from rule_snippets import line_of, marked_findings

# -- a worker called directly on the single-GPU path, spawned on the others ---------------------
SPAWN_WORKER = """
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def work(gpu, opts):
    dist.init_process_group("nccl", rank=gpu, world_size=opts.gpus)
    net = Net().to(gpu){net_mark}
    net = DDP(net, device_ids=[gpu])
    for images, labels in batches:
        logits = net(images.to(gpu)){batch_mark}


def launch(opts):
{launch}
"""

SINGLE_GPU_BRANCH = """\
    if {test}:
        work(0, opts)
    else:
        mp.spawn(work, nprocs=opts.gpus, args=(opts,))"""


@pytest.mark.parametrize("test", ["opts.gpus == 1", "ngpu < 2", "not opts.multi_gpu", "opts.one_card"])
def test_direct_call_on_the_single_gpu_path_is_not_a_rank(lint, test):
    """`work(0, opts)` beside `mp.spawn(work, ...)`: the 0 is the one process's GPU; in the spawned
    ranks `gpu` comes from spawn. Whatever the test says, the arm beside the spawn is one process."""
    source = SPAWN_WORKER.format(net_mark="", batch_mark="", launch=SINGLE_GPU_BRANCH.format(test=test))
    assert lint(source, ["DDP005"]) == []


def test_direct_call_with_zero_that_every_rank_makes_is_flagged(lint):
    """The same worker called with 0 from a function every rank runs (no spawn beside it)."""
    launch = """\
    dist.init_process_group("nccl")
    work(0, opts)"""
    source = SPAWN_WORKER.format(net_mark="  # <- DDP005", batch_mark="  # <- DDP005", launch=launch)
    assert lint(source, ["DDP005"]) == marked_findings(source)


# -- the launching process ------------------------------------------------------------------
LAUNCHER = """
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


class Regressor(torch.nn.Module):
    def __init__(self, where):
        super().__init__()
        self.head = torch.nn.Linear(4, 1).to(where){init_mark}


def worker(rank, net, size):
    dist.init_process_group("nccl", rank=rank, world_size=size)
    torch.cuda.set_device(rank)
    net = net.to(rank)
{worker_extra}

def reference_run(net):
    net = net.to("cuda:0"){reference_mark}
    return net(torch.ones(4, device="cuda:0")){reference_mark}


def main():
    size = torch.cuda.device_count()
    net = Regressor("cuda:0")
    reference_run(Regressor("cpu"))
    mp.spawn(worker, args=(net, size), nprocs=size)
    summary = torch.load("summary.pt")
    print(summary)


if __name__ == "__main__":
    main()
"""


def test_launching_process_before_and_after_spawn_is_one_process(lint):
    """A model built and moved to cuda:0 before `mp.spawn`, a single-GPU reference run called only
    from the launcher, and a `torch.load` after the workers are done: one process each time."""
    source = LAUNCHER.format(init_mark="", worker_extra="", reference_mark="")
    assert lint(source, ["DDP005", "DDP008"]) == []


def test_the_same_lines_inside_the_spawned_worker_are_flagged(lint):
    """The reference run called from the worker runs in every rank: cuda:0 there is everyone's
    GPU 0, and a torch.load in the worker loads onto it on every rank."""
    worker_extra = """\
    reference_run(net)
    state = torch.load("summary.pt")  # <- DDP008
"""
    source = LAUNCHER.format(init_mark="", worker_extra=worker_extra, reference_mark="  # <- DDP005")
    assert lint(source, ["DDP005", "DDP008"]) == marked_findings(source)


def test_class_also_built_in_the_worker_is_flagged(lint):
    worker_extra = """\
    extra = Regressor("cuda:0")
"""
    source = LAUNCHER.format(init_mark="  # <- DDP005", worker_extra=worker_extra, reference_mark="")
    assert lint(source, ["DDP005"]) == marked_findings(source)


# -- a device chosen by the rank the launcher always sets --------------------------------------
DEFAULT_RANK = """
import argparse
import os
import torch
import torch.distributed as dist

{read}
dist.init_process_group("nccl")
where = torch.device({choice})
model = Model().to(where)
"""


@pytest.mark.parametrize(
    "read",
    [
        'parser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", type=int, default=-1)\n'
        "local_rank = parser.parse_args().local_rank",
        'local_rank = int(os.environ.get("LOCAL_RANK", -1))',
    ],
)
def test_gpu0_only_when_the_launcher_did_not_set_the_rank(lint, read):
    source = DEFAULT_RANK.format(read=read, choice='"cuda:0" if local_rank == -1 else f"cuda:{local_rank}"')
    assert lint(source, ["DDP005"]) == []
    flipped = DEFAULT_RANK.format(read=read, choice='"cuda:0" if local_rank != -1 else "cpu"')
    assert lint(flipped, ["DDP005"]) == [(line_of(flipped, "torch.device("), "DDP005")]


def test_option_chosen_arm_beside_a_process_group_start_still_runs_in_ranks(lint):
    """`if args.quick: ... else: dist.init_process_group()` in one function: under torchrun every
    process may take the quick arm, so its cuda:0 is still everyone's GPU 0."""
    source = """
import torch
import torch.distributed as dist

def main(args):
    if args.quick:
        device = torch.device("cuda:0")  # <- DDP005
    else:
        dist.init_process_group("nccl")
        device = torch.device("cuda", args.local_rank)
    return device
"""
    assert lint(source, ["DDP005"]) == marked_findings(source)


# -- code nobody runs as part of a training run ---------------------------------------------------
@pytest.mark.parametrize(
    "header",
    [
        "from torch.testing._internal.common_distributed import MultiProcessTestCase\n\n"
        "class GradSyncCheck(MultiProcessTestCase):",
        "from torch.testing._internal.common_distributed import DistributedTestBase\n\n"
        "class GradSyncCheck(DistributedTestBase):",
        "class GradSyncTest:",
        "import unittest\n\nclass GradSyncCheck(unittest.TestCase):",
    ],
)
def test_test_classes_are_left_alone(lint, header):
    source = f"""
import torch
import torch.distributed as dist
{header}
    def check_sync(self):
        dist.init_process_group("nccl", rank=self.rank, world_size=2)
        net = Net().to("cuda:0")
        state = torch.load("weights.pt")
"""
    assert lint(source, ["DDP005", "DDP008"]) == []


UNUSED_CLASS = """
import torch
import torch.distributed as dist

dist.init_process_group("nccl")


class LegacyRunner:
    def prepare(self):
        self.net = Net().to("cuda:0"){mark}
        self.state = torch.load("weights.pt"){load_mark}
{use}
"""


def test_class_a_script_never_builds_is_left_alone(lint):
    assert lint(UNUSED_CLASS.format(mark="", load_mark="", use=""), ["DDP005", "DDP008"]) == []


def test_class_the_script_builds_is_flagged(lint):
    source = UNUSED_CLASS.format(mark="  # <- DDP005", load_mark="  # <- DDP008", use="\nLegacyRunner().prepare()")
    assert lint(source, ["DDP005", "DDP008"]) == marked_findings(source)


def test_class_of_a_library_module_is_still_checked(lint):
    """A module with no `__main__` block and no process-group start of its own is imported: its
    classes are built elsewhere."""
    source = """
import torch
import torch.distributed as dist


class Runner:
    def prepare(self):
        dist.barrier()
        self.net = Net().to("cuda:0")  # <- DDP005
"""
    assert lint(source, ["DDP005"]) == marked_findings(source)


# -- the model itself ----------------------------------------------------------------------------
def test_where_model_places_launcher_worker_and_single_process_path():
    source = """
import torch.distributed as dist
import torch.multiprocessing as mp

def worker(rank, n):
    dist.init_process_group("nccl", rank=rank, world_size=n)
    step()
    if rank == 0:
        log()

def baseline():
    step()

def main(n):
    baseline()
    if n == 1:
        worker(0, n)
    else:
        mp.spawn(worker, args=(n,), nprocs=n)
    report()
"""
    facts = build_facts(cst.parse_module(source), source)
    model = ModuleModel(facts)
    where = model.where
    by_name = {site.name: site for site in facts.calls}
    inside = {f.name: f for f in facts.functions}
    assert where.of(by_name["init_process_group"].context) is Where.EVERY_RANK
    assert where.of(by_name["log"].context) is Where.SOME_RANKS
    assert where.of(by_name["report"].context) is Where.LAUNCHER
    step_in_baseline = next(s for s in facts.calls if s.name == "step" and s.context.scope is inside["baseline"].scope)
    assert where.of(step_in_baseline.context) is Where.LAUNCHER
    direct = next(s for s in facts.calls if s.name == "worker")
    assert where.of(direct.context) is Where.SINGLE_PROCESS


PICK_DEVICE = """
import argparse
import torch
import torch.distributed as dist


def pick(gpu=None):
    if gpu is not None:
        chosen = torch.device(f"cuda:{{gpu}}")
    else:
        chosen = torch.device("cuda"){mark}
    return chosen


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    opts = parser.parse_args()
    distributed = opts.local_rank != -1
    if distributed:
        dist.init_process_group("nccl")
    where = pick({argument})
    model = Model().to(where)


if __name__ == "__main__":
    main()
"""


def test_bare_cuda_for_a_none_only_the_single_process_path_passes(lint):
    source = PICK_DEVICE.format(mark="", argument="opts.local_rank if distributed else None")
    assert lint(source, ["DDP005"]) == []


def test_bare_cuda_for_a_none_every_rank_passes_is_flagged(lint):
    source = PICK_DEVICE.format(mark="  # <- DDP005", argument="None")
    assert lint(source, ["DDP005"]) == marked_findings(source)


SET_DEVICE_ZERO = """
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(rank, world_size):
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    model = DDP(nn.Linear(16, 1).to("cuda:0"), device_ids=[0])
{launch}
"""


def test_set_device_zero_in_a_spawned_worker_puts_every_rank_on_gpu_0(lint):
    """mp.spawn's workers all see the machine's GPUs: set_device(0) is no sign of one GPU each."""
    launch = '\n\nif __name__ == "__main__":\n    mp.spawn(worker, args=(2,), nprocs=2)\n'
    assert lint(SET_DEVICE_ZERO.format(launch=launch), ["DDP005"]) == [(11, "DDP005"), (11, "DDP005")]


def test_set_device_zero_under_an_outside_launcher_means_one_gpu_per_process(lint):
    """Started per GPU by a launcher that hides the other GPUs (SLURM's one task per GPU)."""
    launch = '\n\nif __name__ == "__main__":\n    worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))\n'
    assert lint(SET_DEVICE_ZERO.format(launch=launch), ["DDP005"]) == []
