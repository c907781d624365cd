"""DDP010 and where code runs (issue 20, item 3): a finding about ranks needs its code to run in a
rank. Each shape comes twice: left alone where the code runs in one process only, flagged where the
same lines run in every spawned or launched rank (a final evaluation after training). Expected
findings are marked `# <- DDP010` on their line."""

from __future__ import annotations

from rule_snippets import line_of

# -- a final evaluation nobody waits for -----------------------------------------------------------
FINAL_TEST = """
import torch
import torch.distributed as dist


def train(opts):
    for epoch in range(opts.epochs):
        for images, targets in train_loader:
            loss = model(images).sum()
            loss.backward()
            optimizer.step()
    if opts.rank in (-1, 0):
        model.eval()
        with torch.no_grad():
            for images, targets in test_loader:{mark}
                score(model(images), targets)
    else:
        dist.destroy_process_group()


if __name__ == "__main__":
    opts = parse()
    if opts.rank != -1:
        dist.init_process_group("nccl")
    if not opts.search:
        train(opts)
    else:
{search}
"""


def test_final_evaluation_after_training_is_left_alone(lint):
    """The search rounds are asserted single-process: in a distributed run train() runs once and
    the other ranks only tear down after the final test."""
    search = """\
        assert opts.rank == -1, "no search under the launcher"
        for trial in range(50):
            train(opts)"""
    source = FINAL_TEST.format(mark="", search=search)
    assert lint(source, ["DDP010"]) == []


def test_final_evaluation_repeated_by_a_loop_the_ranks_run_is_flagged(lint):
    search = """\
        for trial in range(50):
            train(opts)"""
    source = FINAL_TEST.format(mark="", search=search)
    guard = line_of(source, "if opts.rank in (-1, 0):")
    assert lint(source, ["DDP010"]) == [(guard, "DDP010")]
