"""DDP013 dataset-download-on-every-rank."""

from __future__ import annotations

from typing import Iterator

from ddplint.analysis.coordination import rank_zero_goes_first
from ddplint.analysis.facts import CallSite, ModuleFacts
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.syntax import is_true, keyword_arg
from ddplint.analysis.torch_api import DATASET_PACKAGES, DISTRIBUTED_PACKAGES
from ddplint.rules.base import Finding, Rule


def check(model: ModuleModel) -> Iterator[Finding]:
    facts = model.facts
    if not model.distributed:
        return
    ranks = model.ranks
    for site in facts.calls:
        if not _downloads(facts, site):
            continue
        if ranks.runs_single_process(site.context) or rank_zero_goes_first(model, site):
            continue
        if _in_a_command_of_its_own(facts, site):
            continue
        yield RULE.finding(
            site.node,
            "every rank downloads this dataset at once into the same folder: the archive gets corrupted",
            why="the ranks write and extract the same archive over each other, and the job fails "
            "half-way or trains on a corrupt copy; download on (local) rank 0 first while the others "
            "wait in a barrier, then build the dataset on every rank",
        )


def _in_a_command_of_its_own(facts: ModuleFacts, site: CallSite) -> bool:
    """In a function the file never calls and that starts nothing distributed itself (a
    `download` sub-command handed to a CLI dispatcher, a helper of another module): nothing says
    the ranks run it."""
    function = facts.function_of(site.context.scope)
    if function is None or facts.call_sites_of(function):
        return False
    return not any(
        name.startswith(DISTRIBUTED_PACKAGES)
        for call in facts.calls_by_function.get(id(function), [])
        for name in facts.qualified_names(call.node.func)
    )


def _downloads(facts: ModuleFacts, site: CallSite) -> bool:
    """`torchvision.datasets.X(..., download=True)` (or torchaudio's / torchtext's)."""
    flag = keyword_arg(site.node, "download")
    if flag is None or not is_true(flag.value):
        return False
    return any(name.startswith(DATASET_PACKAGES) for name in facts.qualified_names(site.node.func))


RULE = Rule(
    code="DDP013",
    name="dataset-download-on-every-rank",
    summary="Every rank downloads and extracts the same dataset at once: corrupt archives, failed starts.",
    what="""
        In a distributed script, flags a dataset constructor of `torchvision.datasets`,
        `torchaudio.datasets` or `torchtext.datasets` given `download=True` where every rank runs
        it: not under a single-rank guard, not with rank 0 going first.
    """,
    why="""
        Each rank checks the folder, finds no dataset and starts the same download into the same
        file, then extracts it over the files another rank is extracting. The archive is
        truncated or overwritten while it is read: the job fails on a bad checksum or an
        incomplete archive, or some ranks read a half-written file, and the failure depends on
        timing, so it comes and goes.
    """,
    fix="""
        Let (local) rank 0 download while the others wait, then build the dataset everywhere:
        `if rank != 0: dist.barrier()`, the constructor, `if rank == 0: dist.barrier()`; or
        `with accelerator.main_process_first():`; or download once before launching the ranks
        and pass `download=False`. In Lightning, download in `prepare_data`. No automatic fix:
        where the barrier goes depends on the script.
    """,
    silent="""
        - `download=False` or no `download` argument.
        - The call under a single-rank guard (`if rank == 0:`), in a `with` block of a rank-0-first
          context manager (`main_process_first()`, `local_main_process_first()`, or a function of
          the file that makes a barrier, such as `torch_distributed_zero_first(rank)`), in a
          Lightning `prepare_data` method, or in a function that puts a barrier under a rank
          condition (`if rank != 0: barrier()` ... `if rank == 0: barrier()`).
        - The call on the path that starts no ranks (the `else:` of `if distributed:`), and
          scripts that are not distributed.
        - The call in a function the file never calls that starts nothing distributed itself (a
          `download` sub-command handed to `fire.Fire({...})` or argparse, a helper for other
          modules): nothing in the file says that the ranks run it.

        `ddplint verify` confirms a finding when two or more ranks open the same files for
        writing from the dataset's line before their first batch, and refutes it when only one
        rank writes them; with the data already in place nothing is downloaded, and the verdict
        says that the race was not measured.
    """,
    blind_spots="""
        - Only the literal `download=True` is seen; a flag passed through a variable
          (`download=args.download`) is not followed.
        - Other downloading helpers (`datasets.load_dataset`, `huggingface_hub` downloads, a
          project's own fetch function) are not judged: several of them lock the cache themselves.
        - A download helper the file never calls, called by the ranks from another module, is
          not judged.
        - Ranks that each download into a folder of their own (a path built from the rank) are
          flagged all the same.
    """,
    triggers=(b"download",),
    distributed_only=True,
    check=check,
    invalid=(
        """
        import torch.distributed as dist
        from torchvision import datasets

        dist.init_process_group("gloo")
        train_set = datasets.CIFAR10("./data", train=True, download=True)  # <- DDP013
        """,
        """
        import torch.distributed as dist
        import torchvision

        def build(rank):
            dist.init_process_group("nccl")
            return torchvision.datasets.MNIST(root="data", download=True)  # <- DDP013
        """,
    ),
    valid=(
        """
        import torch.distributed as dist
        from torchvision import datasets

        dist.init_process_group("gloo")
        rank = dist.get_rank()
        if rank != 0:
            dist.barrier()
        train_set = datasets.CIFAR10("./data", train=True, download=True)
        if rank == 0:
            dist.barrier()
        """,
        """
        from accelerate import Accelerator
        from torchvision import datasets

        accelerator = Accelerator()
        with accelerator.main_process_first():
            train_set = datasets.MNIST("data", download=True)
        """,
        """
        import torch.distributed as dist
        from torchvision import datasets

        dist.init_process_group("gloo")
        train_set = datasets.CIFAR10("./data", train=True, download=False)
        """,
    ),
)
