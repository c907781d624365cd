"""Whether a script is distributed, when its only rank read sits after `dist.is_initialized()`
in an `and` (`if dist.is_initialized() and dist.get_rank() != 0: return`): a standalone
evaluation script that also works inside a distributed job. Run by itself it is one process, so
its checkpoint load needs no map_location; the same read without the test makes it distributed."""

from __future__ import annotations

SCRIPT = """
import torch
import torch.distributed as dist


def evaluate(path):
    model = build_model()
    model.load_state_dict(torch.load(path))
    model.cuda().eval()
    score = run_validation(model)
    if {test}:
        return score
    print(score)
    return score


if __name__ == "__main__":
    evaluate("model_final.pth")
"""


def test_rank_read_guarded_by_is_initialized_leaves_a_standalone_script_alone(lint):
    assert lint(SCRIPT.format(test="dist.is_initialized() and not dist.get_rank() == 0"), ["DDP008"]) == []


def test_unguarded_rank_read_makes_the_script_distributed(lint):
    assert [code for _, code in lint(SCRIPT.format(test="not dist.get_rank() == 0"), ["DDP008"])] == ["DDP008"]
