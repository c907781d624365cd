"""DDP013 (a dataset download every rank runs at once): what it flags and what it leaves alone,
beyond the examples on its page."""

from __future__ import annotations

import textwrap

import pytest

from rule_snippets import finding_rows

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
    assert finding_rows(source, "DDP013") == [8]


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
    assert finding_rows(DOWNLOAD_HEAD + body, "DDP013") == []


def test_ddp013_leaves_the_single_process_path_alone():
    source = """
    import torch.distributed as dist
    from torchvision import datasets

    if dist.is_available() and dist.is_initialized():
        ds = datasets.CIFAR100("d", download=False)
    else:
        ds = datasets.CIFAR100("d", download=True)
    """
    assert finding_rows(source, "DDP013") == []


def test_ddp013_is_silent_outside_distributed_scripts():
    assert finding_rows("from torchvision import datasets\nds = datasets.MNIST('d', download=True)\n", "DDP013") == []


def test_ddp013_leaves_a_download_under_a_file_lock_alone():
    source = DOWNLOAD_HEAD + "from filelock import FileLock\ndef data():\n    with FileLock('/tmp/lock'):\n        return tvd.SVHN('d', download=True)\n"
    assert finding_rows(source, "DDP013") == []


def test_ddp013_leaves_a_download_subcommand_alone_and_flags_a_spawned_one():
    command = DOWNLOAD_HEAD + "import fire\ndef fetch(root):\n    tvd.SVHN(root, download=True)\nfire.Fire({'fetch': fetch})\n"
    assert finding_rows(command, "DDP013") == []
    spawned = command.replace("    tvd.SVHN", "    dist.init_process_group('nccl')\n    tvd.SVHN")
    assert finding_rows(spawned, "DDP013") == [9]
