"""DDP001 for a class whose constructor builds the training DataLoader over a dataset it is handed
(`Learner(net, dataset)`, `__init__` doing `DataLoader(dataset, shuffle=True)`). Alone, such a
class says nothing: its callers may hand it a dataset already split by rank. When the project
builds the class and every such call hands it a dataset made in the calling module, not split by
rank, every rank iterates the whole dataset."""

from __future__ import annotations

import pytest

from rule_snippets import write_files

LEARNER = """
    import torch
    from torch.nn.parallel import DistributedDataParallel
    from torch.utils.data import DataLoader


    class Learner:
        def __init__(self, net, examples, device):
            self.device = device
            self.net = DistributedDataParallel(net.to(device), device_ids=[device])
            self.opt = torch.optim.Adam(self.net.parameters())
            {keep}

        def run(self, passes):
            for _ in range(passes):
                for x, y in self.batches:
                    self.opt.zero_grad()
                    torch.nn.functional.l1_loss(self.net(x.to(self.device)), y.to(self.device)).backward()
                    self.opt.step()
    """

DIRECT = "self.batches = DataLoader(examples, batch_size=64, shuffle=True)"
VIA_ATTRIBUTE = "self.examples = examples\n            self.batches = DataLoader(self.examples, batch_size=64, shuffle=True)"

LAUNCH = """
    import os
    import torch.distributed as dist
    from torch.utils.data import Subset
    from learner import Learner
    from tables import TableSet


    def start():
        dist.init_process_group("nccl")
        device = int(os.environ["LOCAL_RANK"])
        {build}
        Learner(make_net(), examples, device).run(30)


    if __name__ == "__main__":
        start()
    """

TABLES = "import torch\n\nclass TableSet(torch.utils.data.Dataset):\n    pass\n"


def _findings(tmp_path, keep, build):
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    write_files(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'demo'\n",
            "learner.py": LEARNER.replace("{keep}", keep),
            "tables.py": TABLES,
            "launch.py": LAUNCH.replace("{build}", build.replace("\n", "\n        ")),
        },
    )
    found = lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP001"]])
    return sorted((d.filename.rsplit("/", 1)[-1], d.code) for d in found)


@pytest.mark.parametrize("keep", [DIRECT, VIA_ATTRIBUTE], ids=["parameter", "attribute"])
def test_whole_dataset_handed_to_the_constructor_is_flagged_where_the_loader_is_built(tmp_path, keep):
    assert _findings(tmp_path, keep, "examples = TableSet()") == [("learner.py", "DDP001")]


def test_dataset_the_caller_splits_by_rank_is_left_alone(tmp_path):
    build = "rank, world = dist.get_rank(), dist.get_world_size()\nfull = TableSet()\nexamples = Subset(full, range(rank, len(full), world))"
    assert _findings(tmp_path, DIRECT, build) == []


def test_dataset_handed_in_from_outside_the_caller_is_left_alone(tmp_path):
    """The call that builds the class passes a parameter of its own function: what it holds is
    decided further out, maybe split by rank there."""
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    launch = """
        import os
        import torch.distributed as dist
        from learner import Learner


        def start(examples):
            dist.init_process_group("nccl")
            Learner(make_net(), examples, int(os.environ["LOCAL_RANK"])).run(30)
        """
    files = {"pyproject.toml": "[project]\nname = 'demo'\n", "learner.py": LEARNER.replace("{keep}", DIRECT), "launch.py": launch}
    write_files(tmp_path, files)
    assert list(lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP001"]])) == []


def test_class_the_project_never_builds_is_left_alone(tmp_path):
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "learner.py": LEARNER.replace("{keep}", DIRECT)})
    assert list(lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP001"]])) == []
