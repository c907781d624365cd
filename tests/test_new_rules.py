"""DDP013 - DDP016: what each flags and what it leaves alone, beyond the examples on its page."""

from __future__ import annotations

import textwrap

import pytest

from ddplint.engine import lint_source
from ddplint.fix import fix_until_stable
from ddplint.rules import RULES_BY_CODE, select_codes


def findings(source: str, code: str) -> list[int]:
    """Rows of `code`'s findings in the source."""
    text = textwrap.dedent(source).lstrip("\n")
    return [d.location.row for d in lint_source(text, "train.py", [RULES_BY_CODE[code]])]


def test_new_rules_are_registered_and_on_by_default():
    assert {"DDP013", "DDP014", "DDP015", "DDP016"} <= set(select_codes())
    assert RULES_BY_CODE["DDP015"].name == "accumulation-without-no-sync"


# -- DDP013 dataset-download-on-every-rank ------------------------------------------------------
DOWNLOAD_HEAD = """
import torch.distributed as dist
import torchvision.datasets as tvd

dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
"""


def test_ddp013_flags_a_download_every_rank_runs_in_a_function():
    source = DOWNLOAD_HEAD + textwrap.dedent("""
        def data(root):
            return tvd.FashionMNIST(root, train=False, download=True)

        test_set = data("d")
        """)
    assert findings(source, "DDP013") == [8]


@pytest.mark.parametrize(
    "body",
    [
        # rank 0 alone downloads
        "if local_rank == 0:\n    tvd.SVHN('d', download=True)\n",
        # the torch_distributed_zero_first shape, written in the file
        (
            "import contextlib\n"
            "@contextlib.contextmanager\n"
            "def zero_first(rank):\n"
            "    if rank != 0:\n        dist.barrier()\n"
            "    yield\n"
            "    if rank == 0:\n        dist.barrier()\n"
            "with zero_first(local_rank):\n    tvd.SVHN('d', download=True)\n"
        ),
        # Lightning downloads in prepare_data on local rank 0
        "class Data:\n    def prepare_data(self):\n        tvd.SVHN('d', download=True)\n",
        # the flag is off
        "tvd.SVHN('d', download=False)\n",
    ],
    ids=["rank-zero-guard", "zero-first-context", "prepare-data", "download-false"],
)
def test_ddp013_leaves_coordinated_downloads_alone(body):
    assert findings(DOWNLOAD_HEAD + body, "DDP013") == []


def test_ddp013_leaves_the_single_process_path_alone():
    source = """
    import torch.distributed as dist
    from torchvision import datasets

    if dist.is_available() and dist.is_initialized():
        ds = datasets.CIFAR100("d", download=False)
    else:
        ds = datasets.CIFAR100("d", download=True)
    """
    assert findings(source, "DDP013") == []


def test_ddp013_is_silent_outside_distributed_scripts():
    assert findings("from torchvision import datasets\nds = datasets.MNIST('d', download=True)\n", "DDP013") == []


# -- DDP014 unreduced-metric ----------------------------------------------------------------------
METRIC_HEAD = """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("nccl")
test_loader = DataLoader(test_set, sampler=DistributedSampler(test_set, shuffle=False))
"""


def test_ddp014_flags_a_logged_loss_summed_over_the_shard():
    source = METRIC_HEAD + textwrap.dedent("""
        def validate(net):
            net.eval()
            summed = 0.0
            for images, labels in test_loader:
                summed += criterion(net(images), labels).item()
            logger.info("mean loss %.4f", summed / len(test_loader))
        """)
    assert findings(source, "DDP014") == [14]


@pytest.mark.parametrize(
    "reduce_line",
    [
        "dist.all_reduce(t)",
        "t = reduce_tensor(t)",
    ],
)
def test_ddp014_leaves_reduced_counts_alone(reduce_line):
    source = METRIC_HEAD + textwrap.dedent(f"""
        def validate(net):
            hits = 0
            for images, labels in test_loader:
                hits += (net(images).argmax(1) == labels).sum()
            t = torch.tensor(hits)
            {reduce_line}
            print(t.item())
        """)
    assert findings(source, "DDP014") == []


def test_ddp014_leaves_a_syncing_metric_object_alone():
    source = METRIC_HEAD.replace("import torch\n", "import torch\nimport torchmetrics\n", 1) + textwrap.dedent("""
        def validate(net, metric):
            seen = 0
            for images, labels in test_loader:
                metric.update(net(images), labels)
                seen += len(labels)
            print(metric.compute(), seen)
        """)
    assert findings(source, "DDP014") == []


# -- DDP015 accumulation-without-no-sync ---------------------------------------------------------
ACCUMULATION = """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("nccl")
net = DistributedDataParallel(Net().cuda(), device_ids=[local_rank])
for step, batch in enumerate(loader):
    scaler.scale(net(batch).loss / 8).backward()
    if step % 8 == 7:
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
"""


def test_ddp015_flags_a_scaled_backward_every_micro_batch():
    assert findings(ACCUMULATION, "DDP015") == [7]


@pytest.mark.parametrize(
    "change",
    [
        ("    scaler.scale(", "    net.require_backward_grad_sync = step % 8 == 7\n    scaler.scale("),
        ("import torch.distributed as dist", "import torch.distributed as dist\nimport deepspeed\nengine = deepspeed.initialize(model=m)"),
        ("    if step % 8 == 7:", "    if True:"),
        ("    if step % 8 == 7:", "    if dist.get_rank() % 2 == 0:"),
    ],
    ids=["grad-sync-flag", "deepspeed-engine", "steps-every-batch", "rank-condition"],
)
def test_ddp015_leaves_other_shapes_alone(change):
    assert findings(ACCUMULATION.replace(*change), "DDP015") == []


def test_ddp015_is_silent_without_a_ddp_model():
    source = ACCUMULATION.replace("DistributedDataParallel(Net().cuda(), device_ids=[local_rank])", "Net().cuda()")
    assert findings(source, "DDP015") == []


# -- DDP016 module-forward-bypasses-ddp --------------------------------------------------------------
BYPASS = """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
ddp = DDP(Net().cuda())

def train(batch):
    out = ddp.module(batch["x"])
    out.loss.backward()
    opt.step()
"""


def test_ddp016_flags_a_forward_through_module_followed_by_backward():
    assert findings(BYPASS, "DDP016") == [9]


def test_ddp016_fix_calls_the_wrapper():
    text = textwrap.dedent(BYPASS).lstrip("\n")
    rules = [RULES_BY_CODE["DDP016"]]
    lint = lambda source: lint_source(source, "train.py", rules)  # noqa: E731
    assert fix_until_stable(text, lint, False).source == text  # unsafe: not applied by --fix alone
    result = fix_until_stable(text, lint, True).source
    assert '    out = ddp(batch["x"])\n' in result
    assert lint_source(result, "train.py", rules) == []


def test_ddp016_gives_no_fix_for_a_method_of_the_module():
    text = textwrap.dedent(BYPASS).lstrip("\n").replace('ddp.module(batch["x"])', "ddp.module.compute_loss(batch)")
    (diagnostic,) = lint_source(text, "train.py", [RULES_BY_CODE["DDP016"]])
    assert diagnostic.fix is None


@pytest.mark.parametrize(
    "change",
    [
        ('out = ddp.module(batch["x"])', 'out = ddp(batch["x"])'),
        ("def train(batch):", "@torch.no_grad()\ndef train(batch):"),
        ('out = ddp.module(batch["x"])', "out = ddp.module.state_dict()"),
        ("    out.loss.backward()\n", ""),
        ("ddp = DDP(Net().cuda())", "ddp = Net().cuda()"),
    ],
    ids=["through-wrapper", "no-grad-decorator", "state-dict", "no-backward", "not-ddp"],
)
def test_ddp016_leaves_other_calls_alone(change):
    assert findings(BYPASS.replace(*change), "DDP016") == []


def test_ddp016_leaves_an_evaluation_function_alone():
    source = BYPASS + textwrap.dedent("""
        def check(batch):
            ddp.eval()
            score = ddp.module(batch)
            score.backward()  # saliency, no optimizer step
        """)
    assert findings(source, "DDP016") == [9]


def test_ddp014_passes_over_a_loader_iterated_in_a_comprehension():
    source = METRIC_HEAD + "batches = [b for b in test_loader]\nn = 0\nfor b in batches:\n    n += 1\nprint(n)\n"
    assert findings(source, "DDP014") == []


def test_ddp013_leaves_a_download_under_a_file_lock_alone():
    source = DOWNLOAD_HEAD + "from filelock import FileLock\ndef data():\n    with FileLock('/tmp/lock'):\n        return tvd.SVHN('d', download=True)\n"
    assert findings(source, "DDP013") == []


def test_ddp014_leaves_counts_averaged_by_a_helper_that_reduces_alone():
    source = METRIC_HEAD + textwrap.dedent("""
        def average(value):
            t = torch.tensor(value)
            dist.all_reduce(t)
            return t / dist.get_world_size()

        def validate(net):
            loss = 0.0
            for images, labels in test_loader:
                loss += criterion(net(images), labels).item()
            loss = average(loss)
            print(loss)
        """)
    assert findings(source, "DDP014") == []


def test_ddp015_flags_only_the_accumulating_arm():
    source = ACCUMULATION.replace(
        "    scaler.scale(net(batch).loss / 8).backward()\n    if step % 8 == 7:\n        scaler.step(opt)\n",
        "    if accumulate:\n"
        "        net(batch).loss.backward()\n"
        "        if step % 8 == 7:\n            opt.step()\n"
        "    else:\n"
        "        net(batch).loss.backward()\n"
        "        opt.step()\n"
        "    if False:\n        scaler.step(opt)\n",
    )
    assert findings(source, "DDP015") == [8]


def test_ddp013_leaves_a_download_subcommand_alone_and_flags_a_spawned_one():
    command = DOWNLOAD_HEAD + "import fire\ndef fetch(root):\n    tvd.SVHN(root, download=True)\nfire.Fire({'fetch': fetch})\n"
    assert findings(command, "DDP013") == []
    spawned = command.replace("    tvd.SVHN", "    dist.init_process_group('nccl')\n    tvd.SVHN")
    assert findings(spawned, "DDP013") == [9]


def test_ddp015_follows_a_stepping_flag():
    source = ACCUMULATION.replace("    if step % 8 == 7:", "    boundary = (step + 1) % 8 == 0\n    if boundary:")
    assert findings(source, "DDP015") == [7]


def test_ddp015_is_not_silenced_by_the_flag_named_in_a_comment():
    source = ACCUMULATION.replace("    if step % 8 == 7:", "    # TODO: require_backward_grad_sync\n    if step % 8 == 7:")
    assert findings(source, "DDP015") == [7]


def test_ddp014_leaves_a_report_labelled_with_the_rank_alone():
    source = METRIC_HEAD + textwrap.dedent("""
        def validate(net):
            hits = 0
            for images, labels in test_loader:
                hits += (net(images).argmax(1) == labels).sum().item()
            print(f"rank {dist.get_rank()}: {hits}")
        """)
    assert findings(source, "DDP014") == []
    assert findings(source.replace("rank {dist.get_rank()}: ", ""), "DDP014") == [13]
