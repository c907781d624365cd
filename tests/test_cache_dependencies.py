"""The results cache sees an edit to any module a file's result depends on, including the ones its
import lines do not name: a module further down a chain of star imports, and the module a
package's `__init__.py` re-exports a name from."""

from __future__ import annotations

from pathlib import Path

from ddplint.cli import main


def _codes(root: Path, capsys) -> list[str]:
    main(["check", "--output-format", "concise", "--exit-zero", str(root)])
    return [line.split()[1] for line in capsys.readouterr().out.splitlines() if ": DDP" in line]


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_an_edit_two_star_imports_away_is_seen_by_a_cached_run(tmp_path, capsys):
    root = _project(tmp_path, {
        "train.py": "from models import *\n\nmodel = nn.DataParallel(net)\nout = model(x)\n",
        "models.py": "from helpers import *\n",
        "helpers.py": "import torch.nn as nn\n",
    })
    assert _codes(root, capsys) == ["DDP003"]
    (root / "helpers.py").write_text("import mylib as nn\n")  # `nn` is no longer torch's
    assert _codes(root, capsys) == []


def test_an_edit_to_the_module_a_package_re_exports_from_is_seen_by_a_cached_run(tmp_path, capsys):
    sharded = (
        "from torch.utils.data import DataLoader, DistributedSampler\n\n"
        "def make_loader(ds):\n    return DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds))\n"
    )
    root = _project(tmp_path, {
        "train.py": (
            "import torch.distributed as dist\nfrom data import make_loader\n\n"
            "dist.init_process_group('nccl')\nloader = make_loader(ds)\n"
            "for epoch in range(10):\n    for batch in loader:\n        step(batch)\n"
        ),
        "data/__init__.py": "from .build import make_loader\n",
        "data/build.py": sharded,
    })
    assert _codes(root, capsys) == ["DDP002"]  # a sampler, and no set_epoch
    (root / "data" / "build.py").write_text(sharded.replace(", sampler=DistributedSampler(ds)", ""))
    assert _codes(root, capsys) == []  # no sampler now, so nothing to set an epoch on
