"""DDP007 through a flag parameter that the callers make a rank test: `def validate(...,
verbose=False): ... if verbose: dist.all_reduce(t)` with every call passing `verbose=
dist.get_rank() == 0` runs the all-reduce on rank 0 alone. Quiet when some caller passes a value
true on every rank, or when the collective is made before the flag is tested."""

from __future__ import annotations

from rule_snippets import write_files

VALIDATE = """
    import torch
    import torch.distributed as dist

    def validate(net, loader, verbose=False):
        hits = torch.zeros(2, device="cuda")
        for x, y in loader:
            hits += torch.stack([(net(x).argmax(1) == y).sum(), torch.tensor(len(y))])
        if verbose:
            dist.all_reduce(hits)
            print("accuracy", (hits[0] / hits[1]).item())
    """


def test_flag_every_caller_sets_to_a_rank_zero_test_in_the_same_file(lint):
    found = lint(
        VALIDATE
        + """
    def main():
        dist.init_process_group("nccl")
        for epoch in range(4):
            validate(net, val_loader, verbose=dist.get_rank() == 0)
        validate(net, test_loader)
    """,
        select=["DDP007"],
    )
    assert found == [(9, "DDP007")]


def test_flag_set_to_every_rank_by_one_caller_is_quiet(lint):
    found = lint(
        VALIDATE
        + """
    def main():
        dist.init_process_group("nccl")
        validate(net, val_loader, verbose=dist.get_rank() == 0)
        validate(net, test_loader, verbose=True)
    """,
        select=["DDP007"],
    )
    assert found == []


def test_flag_passed_by_position_from_another_module(tmp_path):
    from ddplint.api import lint_paths
    from ddplint.rules import RULES_BY_CODE

    (tmp_path / "pyproject.toml").write_text("")
    write_files(
        tmp_path,
        {
            # a rank word in the file, so that the screen lets the module through
            "evaluation.py": "    # every rank evaluates its shard\n" + VALIDATE,
            "main.py": """
                import torch.distributed as dist
                from evaluation import validate

                def main():
                    dist.init_process_group("nccl")
                    is_leader = dist.get_rank() == 0
                    validate(net, val_loader, is_leader)
                """,
        },
    )
    found = list(lint_paths([str(tmp_path)], [RULES_BY_CODE["DDP007"]]))
    assert [(d.filename.replace("\\", "/").rsplit("/", 1)[-1], d.location.row) for d in found] == [("evaluation.py", 11)]


def test_collective_before_the_flag_test_is_quiet(lint):
    found = lint(
        """
        import torch.distributed as dist

        def report(total, verbose=False):
            dist.all_reduce(total)
            if verbose:
                print(total.item())

        def main():
            dist.init_process_group("nccl")
            report(loss_sum, verbose=dist.get_rank() == 0)
        """,
        select=["DDP007"],
    )
    assert found == []


TRAINER = """
    import torch.distributed as dist

    class Trainer:
        def __init__(self, net, log_stats=False):
            self.net = net
            self.log_stats = log_stats

        def end_of_epoch(self, loss, epoch):
            if self.log_stats and epoch % 2 == 0:
                dist.all_reduce(loss)
                print("epoch loss", loss.item())
    """


def test_flag_kept_on_self_by_the_constructor_every_construction_sets_to_rank_zero(lint):
    found = lint(
        TRAINER
        + """
    dist.init_process_group("nccl")
    trainer = Trainer(net, log_stats=dist.get_rank() == 0)
    """,
        select=["DDP007"],
    )
    assert found == [(10, "DDP007")]


def test_flag_kept_on_self_set_true_by_one_construction_is_quiet(lint):
    found = lint(
        TRAINER
        + """
    dist.init_process_group("nccl")
    trainer = Trainer(net, log_stats=dist.get_rank() == 0)
    probe = Trainer(net, True)
    """,
        select=["DDP007"],
    )
    assert found == []
