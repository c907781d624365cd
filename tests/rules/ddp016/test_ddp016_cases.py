"""DDP016 (a training forward through `ddp_model.module`): what it flags and what it leaves alone,
beyond the examples on its page."""

from __future__ import annotations

import textwrap

import pytest

from ddplint.engine import lint_source
from ddplint.fix import fix_until_stable
from ddplint.rules import RULES_BY_CODE
from rule_snippets import finding_rows

# -- DDP016 module-forward-bypasses-ddp --------------------------------------------------------------
BYPASS = """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
ddp = DDP(Net().cuda())

def train(batch):
    out = ddp.module(batch["x"])
    out.loss.backward()
    opt.step()
"""


def test_ddp016_flags_a_forward_through_module_followed_by_backward():
    assert finding_rows(BYPASS, "DDP016") == [9]


def test_ddp016_fix_calls_the_wrapper():
    text = textwrap.dedent(BYPASS).lstrip("\n")
    rules = [RULES_BY_CODE["DDP016"]]
    lint = lambda source: lint_source(source, "train.py", rules)  # noqa: E731
    assert fix_until_stable(text, lint, False).source == text  # unsafe: not applied by --fix alone
    result = fix_until_stable(text, lint, True).source
    assert '    out = ddp(batch["x"])\n' in result
    assert lint_source(result, "train.py", rules) == []


def test_ddp016_gives_no_fix_for_a_method_of_the_module():
    text = textwrap.dedent(BYPASS).lstrip("\n").replace('ddp.module(batch["x"])', "ddp.module.compute_loss(batch)")
    (diagnostic,) = lint_source(text, "train.py", [RULES_BY_CODE["DDP016"]])
    assert diagnostic.fix is None


@pytest.mark.parametrize(
    "change",
    [
        ('out = ddp.module(batch["x"])', 'out = ddp(batch["x"])'),
        ("def train(batch):", "@torch.no_grad()\ndef train(batch):"),
        ('out = ddp.module(batch["x"])', "out = ddp.module.state_dict()"),
        ("    out.loss.backward()\n", ""),
        ("ddp = DDP(Net().cuda())", "ddp = Net().cuda()"),
    ],
    ids=["through-wrapper", "no-grad-decorator", "state-dict", "no-backward", "not-ddp"],
)
def test_ddp016_leaves_other_calls_alone(change):
    assert finding_rows(BYPASS.replace(*change), "DDP016") == []


def test_ddp016_leaves_an_evaluation_function_alone():
    source = BYPASS + textwrap.dedent("""
        def check(batch):
            ddp.eval()
            score = ddp.module(batch)
            score.backward()  # saliency, no optimizer step
        """)
    assert finding_rows(source, "DDP016") == [9]
