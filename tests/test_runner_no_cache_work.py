"""A run without a results cache does not work out what a cache would key each result on (the
module names its imports and callers depend on): nothing would store it. With a cache it does."""

from __future__ import annotations

from pathlib import Path

from ddplint.analysis.project import ProjectIndex
from ddplint.api import lint_paths
from ddplint.cache import ResultCache
from ddplint.rules import select_rules


def _project(root: Path) -> Path:
    """A script whose loader comes from a helper module without a sampler (DDP001 there)."""
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "helpers.py").write_text(
        "from torch.utils.data import DataLoader\n\ndef build(ds):\n    return DataLoader(ds, batch_size=4, shuffle=True)\n"
    )
    (root / "train.py").write_text(
        "import torch.distributed as dist\nfrom helpers import build\n\ndist.init_process_group('nccl')\n"
        "loader = build(data)\nfor epoch in range(2):\n    for x in loader:\n        model(x).backward()\n        optimizer.step()\n"
    )
    return root


def _asked(monkeypatch) -> list[str]:
    asked: list[str] = []
    original = ProjectIndex.dependency_words

    def counting(self, path, data):
        asked.append(path)
        return original(self, path, data)

    monkeypatch.setattr(ProjectIndex, "dependency_words", counting)
    return asked


def test_no_cache_no_dependency_words(tmp_path, monkeypatch):
    asked = _asked(monkeypatch)
    found = [d.sort_key for d in lint_paths([str(_project(tmp_path / "p"))], jobs=1)]
    assert asked == []
    assert found  # the file was analysed all the same (DDP001 through the helper)


def test_a_cache_gets_the_dependency_words(tmp_path, monkeypatch):
    asked = _asked(monkeypatch)
    project = _project(tmp_path / "p")
    cache = ResultCache(tmp_path / "cache", ",".join(r.code for r in select_rules()))
    with_cache = [d.sort_key for d in lint_paths([str(project)], jobs=1, cache=cache)]
    assert len(asked) == 2
    assert with_cache == [d.sort_key for d in lint_paths([str(project)], jobs=1)]
