"""DDP002 when a trainer class gets its loaders from a data-interface object of another module.

The interface builds the DataLoader over a shuffling DistributedSampler in one method and keeps it
on the object (`self.train_loader = DataLoader(...)`); another method hands it out
(`return self.train_loader, self.valid_loader`). The trainer holds the interface from a parameter
annotated with its class (`def connect(self, data: DataInterface)`, after `self.data = None` in
`__init__`), unpacks the loaders onto itself, and its `train()` runs the epochs by calling
`self._train_epoch(epoch)`, which iterates `tqdm(self.train_loader)`. The class is imported from
the package's `__init__`, which re-exports it in an import continued with a backslash.
"""

from __future__ import annotations

from project_support import project_findings

INTERFACE = """\
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class DataInterface:
    def __init__(self, trainset, validset):
        self.trainset = trainset
        self.validset = validset
        self.train_loader = None
        self.valid_loader = None

    def build_loaders(self, batch_size, distributed_sampler=False):
        if distributed_sampler:
            train_sampler = DistributedSampler(self.trainset, shuffle=SHUFFLE)
            valid_sampler = DistributedSampler(self.validset, shuffle=False)
        else:
            train_sampler = None
            valid_sampler = None
        self.train_loader = DataLoader(self.trainset, batch_size=batch_size, sampler=train_sampler)
        self.valid_loader = DataLoader(self.validset, batch_size=batch_size, sampler=valid_sampler)

    def get_loaders(self, **kwargs):
        if self.train_loader is None:
            self.build_loaders(**kwargs)
        return self.train_loader, self.valid_loader
"""

PACKAGE_INIT = """\
from pkg.data.interface import DataInterface, \\
    other_helper
"""

HELPERS = """\
def other_helper():
    return None
"""

# The epoch loop is on line 30.
TRAINER = """\
import torch
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from pkg.data import DataInterface


class Model:
    def __init__(self, net, distributed):
        self.net = net
        self.distributed = distributed
        self.data, self.train_loader, self.valid_loader = None, None, None

    def connect(self, data: DataInterface):
        self.data = data
        self.train_loader, self.valid_loader = self.data.get_loaders(batch_size=32, distributed_sampler=self.distributed)

    def _train_epoch(self, epoch):
        bar = tqdm(self.train_loader)
        for step, (x, y) in enumerate(bar):
            self.net(x).sub(y).pow(2).mean().backward()
            self.optimizer.step()

    def train(self, epochs):
        if self.distributed:
            torch.distributed.init_process_group("nccl")
            self.net = DistributedDataParallel(self.net)
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        for epoch in range(epochs):
            EPOCH_START
            self._train_epoch(epoch)
"""


def _project(tmp_path, shuffle="True", epoch_start="pass", package_init=PACKAGE_INIT):
    files = {
        "pkg/__init__.py": "",
        "pkg/data/__init__.py": package_init,
        "pkg/data/interface.py": INTERFACE.replace("SHUFFLE", shuffle) + "\n\n" + HELPERS,
        "pkg/model.py": TRAINER.replace("EPOCH_START", epoch_start),
    }
    return project_findings(tmp_path, files, ["DDP002"])


def test_epochs_over_a_loader_an_annotated_interface_hands_out_are_flagged(tmp_path):
    assert _project(tmp_path) == [("pkg/model.py", 29)]


def test_import_from_the_defining_module_is_flagged_the_same(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/data/__init__.py": "",
        "pkg/data/interface.py": INTERFACE.replace("SHUFFLE", "True"),
        "pkg/model.py": TRAINER.replace("EPOCH_START", "pass").replace("from pkg.data import", "from pkg.data.interface import"),
    }
    assert project_findings(tmp_path, files, ["DDP002"]) == [("pkg/model.py", 29)]


def test_left_alone_when_each_epoch_sets_the_samplers_epoch(tmp_path):
    assert _project(tmp_path, epoch_start="self.train_loader.sampler.set_epoch(epoch)") == []


def test_left_alone_when_the_interfaces_sampler_does_not_shuffle(tmp_path):
    assert _project(tmp_path, shuffle="False") == []


def test_left_alone_when_the_trainer_makes_one_pass(tmp_path):
    # One pass over the loader: no later epoch to repeat its order.
    one_pass = "for epoch in range(epochs):\n            EPOCH_START\n            self._train_epoch(epoch)"
    files = {
        "pkg/__init__.py": "",
        "pkg/data/__init__.py": PACKAGE_INIT,
        "pkg/data/interface.py": INTERFACE.replace("SHUFFLE", "True") + "\n\n" + HELPERS,
        "pkg/model.py": TRAINER.replace(one_pass, "self._train_epoch(0)"),
    }
    assert TRAINER.count(one_pass) == 1
    assert project_findings(tmp_path, files, ["DDP002"]) == []
