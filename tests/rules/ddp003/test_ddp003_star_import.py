"""DDP003 through star imports of the project's own modules: `from models import *` hands on
`nn` when models.py (or a module it star-imports in turn) says `import torch.nn as nn`."""

from __future__ import annotations

from pathlib import Path

from ddplint.api import lint_paths
from ddplint.rules import RULES_BY_CODE

TRAIN = """\
from models import *

model = Detector().cuda()
if torch.cuda.device_count() > 1:
    model = nn.DataParallel(model)
for images, targets in loader:
    model(images).sum().backward()
"""


def _project(root: Path, files: dict[str, str]) -> None:
    (root / ".git").mkdir()  # the project's root, as in a real checkout
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _findings(paths: list[Path]) -> list[tuple[str, int]]:
    return [(Path(d.filename).name, d.location.row) for d in lint_paths([str(p) for p in paths], [RULES_BY_CODE["DDP003"]])]


def test_nn_from_a_chain_of_star_imports_is_flagged_alone_and_with_the_project(tmp_path):
    _project(
        tmp_path,
        {
            "models.py": "from helpers.common import *\n\nclass Detector(nn.Module):\n    pass\n",
            "helpers/__init__.py": "",
            "helpers/common.py": "import torch\nimport torch.nn as nn\n",
            "train.py": TRAIN,
        },
    )
    assert _findings([tmp_path]) == [("train.py", 5)]
    assert _findings([tmp_path / "train.py"]) == [("train.py", 5)]


def test_nn_that_the_star_module_binds_to_another_library_is_left_alone(tmp_path):
    _project(
        tmp_path,
        {
            "models.py": "import torch\nfrom blocks import layers as nn\n\nclass Detector(nn.Module):\n    pass\n",
            "train.py": TRAIN,
        },
    )
    assert _findings([tmp_path]) == []


def test_an_import_inside_a_function_of_the_star_module_hands_nothing_on(tmp_path):
    _project(
        tmp_path,
        {
            "models.py": "import torch\n\ndef build():\n    import torch.nn as nn\n    return nn.Linear(2, 2)\n",
            "train.py": TRAIN,
        },
    )
    assert _findings([tmp_path]) == []


def test_the_modules_a_star_import_reaches_are_dependencies(tmp_path):
    # a result cache keyed on them notices when helpers/common.py changes what `nn` is
    from ddplint.runner import project_index

    _project(
        tmp_path,
        {
            "models.py": "from helpers.common import *\n",
            "helpers/__init__.py": "",
            "helpers/common.py": "import torch.nn as nn\n",
            "train.py": TRAIN,
        },
    )
    index = project_index([str(tmp_path / "train.py")])
    assert index is not None
    names = sorted(Path(p).relative_to(tmp_path.resolve()).as_posix() for p in index.dependencies(str((tmp_path / "train.py").resolve())))
    assert names == ["helpers/common.py", "models.py"]
