"""DDP002 across modules reached the way research code reaches them: a loader factory re-exported
by its package's `__init__.py`, a package found through a folder an `_init_paths.py` puts on
sys.path, and an epoch loop that hands the factory's loader to a training function of another
module (which iterates it; setting the epoch is still the loop's job)."""

import textwrap
from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import RULES_BY_CODE

FACTORY = """
import torch.utils.data


def make_loader(dataset, distributed):
    sampler = torch.utils.data.distributed.DistributedSampler(dataset) if distributed else None
    return torch.utils.data.DataLoader(dataset, batch_size=16, shuffle=sampler is None, sampler=sampler)
"""

TRAIN = """
import torch.distributed as dist
{imports}
from engine import run_one_epoch


def main(args, model, train_set):
    dist.init_process_group("nccl")
    loader = make_loader(train_set, distributed=True)
    for epoch in range(args.epochs):
{set_epoch}        run_one_epoch(model, loader, epoch)
"""

ENGINE = """
def run_one_epoch(model, loader, epoch):
    for batch in loader:
        model(batch).sum().backward()
"""

INIT_PATHS = """
import os.path as osp
import sys


def add_path(path):
    if path not in sys.path:
        sys.path.insert(0, path)


here = osp.dirname(__file__)
add_path(osp.join(here, "..", "lib"))
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip("\n"))


def _ddp002(root: Path) -> list[tuple[str, int]]:
    found = lint_paths([str(root)], [RULES_BY_CODE["DDP002"]])
    return sorted((Path(d.filename).name, d.location.row) for d in found if d.code == "DDP002")


def _train(imports: str, set_epoch: bool) -> str:
    line = "        loader.sampler.set_epoch(epoch)\n" if set_epoch else ""
    return TRAIN.format(imports=imports, set_epoch=line)


def _reexporting_package(tmp_path: Path, set_epoch: bool, reexport: str = "from .build import make_loader") -> Path:
    _write(
        tmp_path,
        {
            "data/__init__.py": reexport + "\n",
            "data/build.py": FACTORY,
            "engine.py": ENGINE,
            "train.py": _train("from data import make_loader", set_epoch),
        },
    )
    return tmp_path


def test_factory_reexported_by_its_package_is_followed(tmp_path):
    assert _ddp002(_reexporting_package(tmp_path, set_epoch=False)) == [("train.py", 9)]


def test_factory_reexported_with_a_star_is_followed(tmp_path):
    assert _ddp002(_reexporting_package(tmp_path, set_epoch=False, reexport="from .build import *")) == [("train.py", 9)]


def test_reexported_factory_whose_epoch_is_set_is_left_alone(tmp_path):
    assert _ddp002(_reexporting_package(tmp_path, set_epoch=True)) == []


def _tools_layout(tmp_path: Path, set_epoch: bool, bootstrap: str) -> Path:
    _write(
        tmp_path,
        {
            "tools/_init_paths.py": INIT_PATHS,
            "lib/loaders/__init__.py": "from .build import make_loader\n",
            "lib/loaders/build.py": FACTORY,
            "tools/engine.py": ENGINE,
            "tools/train.py": _train(bootstrap + "\nfrom loaders import make_loader", set_epoch),
        },
    )
    return tmp_path


def test_package_on_a_folder_put_on_sys_path_is_followed(tmp_path):
    assert _ddp002(_tools_layout(tmp_path, set_epoch=False, bootstrap="import _init_paths")) == [("train.py", 10)]


def test_package_on_sys_path_with_the_epoch_set_is_left_alone(tmp_path):
    assert _ddp002(_tools_layout(tmp_path, set_epoch=True, bootstrap="import _init_paths")) == []


def test_script_that_never_imports_the_path_module_does_not_see_the_folder(tmp_path):
    """Without `import _init_paths`, `loaders` is not the project's lib/loaders: nothing known."""
    assert _ddp002(_tools_layout(tmp_path, set_epoch=False, bootstrap="import os")) == []


def test_training_function_of_another_module_that_sets_the_epoch_is_left_alone(tmp_path):
    _reexporting_package(tmp_path, set_epoch=False)
    engine = ENGINE.replace("    for batch", "    loader.sampler.set_epoch(epoch)\n    for batch")
    _write(tmp_path, {"engine.py": engine})
    assert _ddp002(tmp_path) == []


def test_factory_loader_handed_to_an_imported_epoch_function_is_flagged(tmp_path):
    """No re-export at all: the factory's loader goes to another module's function each epoch.
    That function iterates the loader; it is not a place that sets the sampler's epoch."""
    _write(tmp_path, {"data.py": FACTORY, "engine.py": ENGINE, "train.py": _train("from data import make_loader", False)})
    assert _ddp002(tmp_path) == [("train.py", 9)]


def test_epoch_loop_calling_a_training_function_gets_the_epoch_message_and_a_fix(tmp_path):
    """Each call of the training function is a whole pass: the message names the epoch loop's
    variable and the fix sets the epoch at the top of that loop (not the 'new iterators' text
    of a step loop that re-makes `iter(loader)`)."""
    _write(tmp_path, {"data.py": FACTORY, "engine.py": ENGINE, "train.py": _train("from data import make_loader", False)})
    [finding] = [d for d in lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP002"]]) if d.code == "DDP002"]
    assert "set_epoch(epoch)" in finding.message and "new iterators" not in finding.message
    assert finding.fix is not None
    inserted = " ".join(edit.content for edit in finding.fix.edits)
    assert "loader.sampler.set_epoch(epoch)" in inserted


def _src_layout(tmp_path: Path, set_epoch: bool) -> Path:
    """pyproject.toml at the root and every module inside `src/proj/`: the package is imported by
    its full name (`proj.data`) from a folder that holds no module of its own."""
    train = _train("from proj.data import make_loader", set_epoch).replace("from engine", "from proj.engine")
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'proj'\n",
            "src/proj/__init__.py": "",
            "src/proj/data.py": FACTORY,
            "src/proj/engine.py": ENGINE,
            "src/proj/train.py": train,
        },
    )
    return tmp_path


def test_package_imported_by_its_full_name_from_a_src_layout_is_followed(tmp_path):
    assert _ddp002(_src_layout(tmp_path, set_epoch=False)) == [("train.py", 9)]


def test_package_imported_by_its_full_name_is_followed_when_a_file_is_named(tmp_path):
    """`ddplint src/proj/train.py` (pre-commit's way) sees the same project."""
    root = _src_layout(tmp_path, set_epoch=False)
    found = lint_paths([str(root / "src" / "proj" / "train.py")], [RULES_BY_CODE["DDP002"]])
    assert [(Path(d.filename).name, d.location.row) for d in found if d.code == "DDP002"] == [("train.py", 9)]


def test_src_layout_whose_epoch_is_set_is_left_alone(tmp_path):
    assert _ddp002(_src_layout(tmp_path, set_epoch=True)) == []
