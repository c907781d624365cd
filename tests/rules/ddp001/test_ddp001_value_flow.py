"""DDP001 where it depends on what a value is where it is used, in program order, and on which
scripts are distributed: scripts that only look distributed. Every shape is tested on what must be
flagged and on what must be left alone."""

from __future__ import annotations


def test_jax_script_with_launcher_boilerplate_is_not_distributed(lint):
    source = """
        import os
        {imports}
        from torch.utils.data import DataLoader

        env_local_rank = int(os.environ.get("LOCAL_RANK", -1))
        loader = DataLoader(train_set, shuffle=True)
        for epoch in range(3):
            for batch in loader:
                step(batch)
        """
    assert lint(source.format(imports="import jax"), ["DDP001"]) == []
    assert lint(source.format(imports="import torch"), ["DDP001"]) == [(6, "DDP001")]
