"""A module's outline, narrowed to the functions and classes that may offer something
(`summaries.offerable_names`), still names every one its summary records that the outline named
before (the project index builds a summary only for a name the outline holds: a name left out
would change what a file that imports it is checked for). Over every module of the case files
and examples; the same check over the ecosystem checkouts is benchmarks/summary_outline.py."""

from __future__ import annotations

from pathlib import Path

from ddplint.analysis import summaries
from outline_support import compare_outline

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted(
    path for folder in ("examples", "tests/corpus", "tests/rules") for path in (ROOT / folder).rglob("*.py")
)


def test_the_narrowed_outline_keeps_every_name_a_summary_records():
    compared = {str(path): compare_outline(str(path)) for path in MODULES}
    summarised = {path: comparison for path, comparison in compared.items() if comparison is not None}
    assert len(summarised) > 50  # the check compares something
    assert sum(len(c.outlined or ()) for c in summarised.values()) < sum(len(c.asked or ()) for c in summarised.values())
    assert {path: comparison.misses for path, comparison in summarised.items() if comparison.misses} == {}


def _offerable(source: str) -> set[str]:
    names = summaries.offerable_names(source.encode())
    assert names is not None
    return set(names)


def test_a_helper_reaching_a_starter_through_another_or_an_alias_is_offerable():
    source = (
        "import torch.distributed as dist\n"
        "from torch.distributed import init_process_group as start\n"
        "def setup():\n    start('nccl')\n"
        "def main():\n    setup()\n"
        "def rank():\n    return dist.get_rank()\n"
        "join = dist.all_reduce\n"
        "def reduce(t):\n    join(t)\n"
    )
    assert _offerable(source) == {"setup", "main", "reduce"}


def test_shapes_recorded_without_a_torch_word_are_offerable():
    source = (
        "def forward_all(model, x):\n    return model(x)\n"
        "def kwargs(bs):\n    return dict(batch_size=bs)\n"
        "def split(ds):\n    return ds, None\n"
        "def forever(loader):\n    while True:\n        yield from loader\n"
        "def fit(loader, opt):\n    for x in loader:\n        opt.step()\n"
        "class Trainer:\n    def run(self):\n        for x in self.loader:\n            self.train_step(x)\n"
        "def plain(x):\n    return x + 1\n"
        "class Config:\n    size = 3\n"
    )
    assert _offerable(source) == {"forward_all", "kwargs", "split", "forever", "fit", "Trainer", "run"}


def test_a_class_counts_as_a_subclass_of_a_recorded_class_or_for_a_training_loop():
    source = (
        "from torch.utils.data import DataLoader as Loader, IterableDataset\n"
        "class Fast(Loader):\n    pass\n"
        "class Faster(Fast):\n    pass\n"
        "def make():\n    class Inner(IterableDataset):\n        pass\n    return Inner\n"
        "class Helper:\n    def kwargs(self):\n        return {'a': 1}\n    def call(self, fn):\n        return fn(), None\n"
        "def step_all(model, opt):\n    model(1).backward()\n"
        "class Runner:\n    def fit(self, loader):\n        for x in loader:\n            step_all(self.model, x)\n"
        "class Looper:\n    def go(self, loader):\n        for x in loader:\n            print(x)\n"
    )
    assert _offerable(source) == {"Fast", "Faster", "make", "Inner", "step_all", "Runner", "fit"}


def test_a_module_that_does_not_parse_has_no_offerable_names():
    assert summaries.offerable_names(b"def broken(:\n") is None


def test_a_function_returning_what_its_callers_hand_it_counts_where_one_hands_a_dict():
    # The summary follows a returned parameter back to the call sites' arguments.
    source = (
        "def settle(options):\n    return options\n"
        "def relay(options):\n    return settle(options)\n"
        "def main():\n    relay({'batch_size': 8})\n"
        "def same(value):\n    return value\n"
    )
    assert _offerable(source) == {"settle", "relay"}


def test_a_helper_a_dict_builder_calls_counts_only_if_it_may_return_a_dict():
    # `check` returns a comparison: whatever its caller hands it, it never returns the dict.
    source = (
        "def check(value, allowed):\n    return type(value) in allowed\n"
        "def pick(value, default):\n    return value if value else default\n"
        "def options(kind):\n    check(kind, (str,))\n    pick(kind, None)\n    return {'batch_size': 8}\n"
    )
    assert _offerable(source) == {"pick", "options"}


def test_a_class_whose_constructor_builds_a_pinning_loader_is_offerable():
    # The summary counts `DataLoader(..., pin_memory=True)` as work on the current device.
    source = (
        "from torch.utils.data import DataLoader\n"
        "def make_loader(data):\n    return DataLoader(data, batch_size=4, pin_memory=True)\n"
        "class Embedder:\n    def __init__(self, data):\n        self.loader = make_loader(data)\n"
        "def plain(data):\n    return DataLoader(data, batch_size=4)\n"
        "class Holder:\n    def __init__(self, data):\n        self.loader = plain(data)\n"
    )
    assert {"make_loader", "Embedder"} <= _offerable(source)
    assert "Holder" not in _offerable(source)  # its loader pins nothing


def test_current_device_work_is_offerable_wherever_the_summary_records_it():
    # The summary records functions and classes (through __init__) working on the current CUDA
    # device (DDP005): the outline must name them, or a file importing them never asks.
    source = (
        "import torch\n"
        "from torch.utils.data import DataLoader\n"
        "def make_loader(ds):\n    return DataLoader(ds, batch_size=4)\n"
        "class Trainer:\n    def __init__(self, model):\n        self.model = model.cuda()\n"
        "def to_gpu(x):\n    return x.to('cuda')\n"
        "def wait():\n    torch.cuda.synchronize()\n"
        "def warm_up(model):\n    to_gpu(model)\n"
        "def plain(x):\n    return x + 1\n"
    )
    summary = summaries.summary_of(source.encode(), "helpers.py")
    assert summary is not None and set(summary.current_device_work) == {"Trainer", "to_gpu", "wait", "warm_up"}
    assert _offerable(source) - {"__init__"} == {"make_loader", "Trainer", "to_gpu", "wait", "warm_up"}
