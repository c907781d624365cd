"""DDP010 where it depends on what a value is where it is used, in program order, and on which
scripts are distributed: a final evaluation and a few written prompts. Every shape is tested on what
must be flagged and on what must be left alone."""

from __future__ import annotations


# -- DDP010: a final evaluation ---------------------------------------------------------------------
def test_final_evaluation_at_the_end_of_the_run_is_silent(lint):
    source = """
        import torch
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl")
            {loop}
            if dist.get_rank() == 0:
                model.eval()
                with torch.no_grad():
                    for x, y in val_loader:
                        score(model(x), y)
            dist.barrier()
            {tail}
        """
    once = "for epoch in range(3):\n                train_one_epoch(model, loader, optimizer)"
    assert lint(source.format(loop=once, tail="dist.destroy_process_group()"), ["DDP010"]) == []
    again = "for epoch in range(3):\n                train_one_epoch(model, loader, optimizer)"
    more_training = "for epoch in range(3):\n                for x, y in loader:\n                    model(x).sum().backward()\n                    optimizer.step()"
    assert lint(source.format(loop=again, tail=more_training), ["DDP010"]) == [(8, "DDP010")]
    per_epoch = """
        import torch
        import torch.distributed as dist

        def main():
            dist.init_process_group("nccl")
            for epoch in range(3):
                for x, y in loader:
                    model(x).sum().backward()
                    optimizer.step()
                if dist.get_rank() == 0:
                    model.eval()
                    with torch.no_grad():
                        for x, y in val_loader:
                            score(model(x), y)
                dist.barrier()
        """
    assert lint(per_epoch, ["DDP010"]) == [(10, "DDP010")]


def test_sampling_a_few_written_prompts_is_not_an_evaluation_pass(lint):
    source = """
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        master = dist.get_rank() == 0
        for step, (x, y) in enumerate(loader):
            model(x).sum().backward()
            optimizer.step()
            if master and step % 100 == 0:
                model.eval()
                with torch.no_grad():
                    for item in {items}:
                        print(generate(model, item))
                model.train()
        """
    assert lint(source.format(items='["The capital of France is", "My favourite colour is"]'), ["DDP010"]) == []
    assert lint(source.format(items="val_loader"), ["DDP010"]) == [(9, "DDP010")]
