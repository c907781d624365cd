"""DDP001 across the modules of a project: the finding is judged where the code runs, whichever
module holds the helper it calls. Each case is a small project on disk."""

from __future__ import annotations

import pytest

from rule_snippets import PLAIN_DATA_MODULE, write_files

TRAIN_SCRIPT = """
    import torch.distributed as dist
    from {module} import build_loader

    dist.init_process_group("nccl")
    train_loader = build_loader(train_set, 32)
    for epoch in range(3):
        for x in train_loader:
            model(x).backward()
            optimizer.step()
    """


@pytest.mark.parametrize("layout", ["package", "scripts side by side"])
def test_loader_built_in_another_module_is_judged_where_it_is_trained(tmp_path, layout):
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    if layout == "package":
        files = {"pkg/__init__.py": "", "pkg/data.py": PLAIN_DATA_MODULE, "pkg/train.py": TRAIN_SCRIPT.format(module=".data")}
        script = tmp_path / "pkg" / "train.py"
    else:
        files = {"data.py": PLAIN_DATA_MODULE, "train.py": TRAIN_SCRIPT.format(module="data")}
        script = tmp_path / "train.py"
    write_files(tmp_path, files)
    found = [(d.filename, d.location.row, d.code) for d in lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP001"]])]
    assert found == [(str(script), 5, "DDP001")]
    assert "data.py:4" in next(iter(lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP001"]]))).explanation
    # Alone, the script cannot know what build_loader returns: silent, as before.
    assert list(lint_paths([str(script)], [RULES_BY_CODE["DDP001"]])) == []
