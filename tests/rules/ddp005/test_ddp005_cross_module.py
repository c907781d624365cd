"""DDP005 across the modules of a project: the finding is judged where the code runs, whichever
module holds the helper it calls. Each case is a small project on disk."""

from __future__ import annotations

from rule_snippets import write_files


def test_process_group_started_in_another_module_makes_the_script_distributed(tmp_path):
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    write_files(
        tmp_path,
        {
            "utils.py": "import torch.distributed as dist\ndef init_distributed():\n    dist.init_process_group('nccl')\n",
            "train.py": "from utils import init_distributed\ninit_distributed()\nmodel = Net().cuda()\n",
        },
    )
    found = [(d.location.row, d.code) for d in lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP005"]])]
    assert found == [(3, "DDP005")]
