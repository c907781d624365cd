"""DDP007 for the DDP wrapper a framework builds: `accelerator.prepare(model, ...)` and
`fabric.setup(model, ...)` return a DistributedDataParallel model on a multi-process run, and
building that wrapper (like `DistributedDataParallel(model)` itself) is a collective: its
constructor checks every rank's parameters and broadcasts rank 0's weights. So a wrapper built
on one rank hangs, and a forward on one rank through the prepared model (also from a helper
method, with the model kept on `self`) hangs as it does through an explicit `DDP(...)`."""

from __future__ import annotations

ACCELERATE_SCRIPT = """
import torch
from torch import nn
from accelerate import Accelerator


def main():
    accelerator = Accelerator()
    model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, optimizer = accelerator.prepare(model, optimizer)
    for step in range(100):
        loss = model(torch.randn(4, 8)).sum()
        accelerator.backward(loss)
        optimizer.step()
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:
{rank_zero_block}


if __name__ == "__main__":
    main()
"""


def _ddp007_rows(lint, source: str) -> list[int]:
    return [row for row, code in lint(source) if code == "DDP007"]


def _row_of(source: str, text: str) -> int:
    lines = source.lstrip("\n").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def _script(block: str) -> str:
    indented = "\n".join(" " * 12 + line for line in block.strip("\n").splitlines())
    return ACCELERATE_SCRIPT.replace("{rank_zero_block}", indented)


def test_model_prepared_again_on_the_main_process_only_is_flagged(lint):
    source = _script("""
model = accelerator.unwrap_model(model)
torch.save(model.state_dict(), "final.pt")
model = accelerator.prepare(model)
""")
    assert _ddp007_rows(lint, source) == [_row_of(source, "model = accelerator.prepare(model)")]


def test_main_process_saving_through_an_unwrapped_reference_is_left_alone(lint):
    source = _script("""
unwrapped = accelerator.unwrap_model(model)
torch.save(unwrapped.state_dict(), "final.pt")
""")
    assert _ddp007_rows(lint, source) == []


def test_loader_prepared_on_the_main_process_only_is_not_a_wrapped_model(lint):
    # preparing a loader builds no DDP wrapper: not the collective of a prepared model
    source = _script("""
extra = torch.utils.data.DataLoader(list(range(10)), batch_size=2)
extra = accelerator.prepare(extra)
""")
    assert _ddp007_rows(lint, source) == []


def test_forward_through_the_prepared_model_on_the_main_process_is_flagged(lint):
    source = _script("""
preview = model(torch.randn(2, 8))
""")
    assert _ddp007_rows(lint, source) == [_row_of(source, "preview = model(")]


def test_forward_through_the_unwrapped_model_on_the_main_process_is_left_alone(lint):
    source = _script("""
preview = accelerator.unwrap_model(model)(torch.randn(2, 8))
""")
    assert _ddp007_rows(lint, source) == []


DDP_SCRIPT = """
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = torch.nn.Linear(8, 8).cuda()
{wrap}
    return model


if __name__ == "__main__":
    main()
"""


def test_ddp_wrapper_built_on_rank_zero_only_is_flagged(lint):
    source = DDP_SCRIPT.replace("{wrap}", "    if rank == 0:\n        model = DistributedDataParallel(model)")
    assert _ddp007_rows(lint, source) == [_row_of(source, "model = DistributedDataParallel(model)")]


def test_ddp_wrapper_built_on_every_rank_is_left_alone(lint):
    source = DDP_SCRIPT.replace(
        "{wrap}", "    model = DistributedDataParallel(model)\n    if rank == 0:\n        print(model.module)"
    )
    assert _ddp007_rows(lint, source) == []


TRAINER = """
import torch
from torch import nn
from accelerate import Accelerator


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(16, 16)
        self.register_buffer("scale", torch.ones(16))

    def forward(self, noise):
        return self.body(noise) * self.scale


class Trainer:
    def __init__(self, generator, lr=1e-4):
        self.accelerator = Accelerator()
        self.gen = generator
        self.opt = torch.optim.Adam(self.gen.parameters(), lr=lr)
        self.gen, self.opt = self.accelerator.prepare(self.gen, self.opt)

    @property
    def is_main(self):
        return self.accelerator.is_main_process

    def sample(self, count):
{sample_body}

    def save_sample(self, count):
        images = self.sample(count)
        torch.save(images, "samples.pt")

    def train(self, steps):
        for step in range(steps):
            loss = self.gen(torch.randn(8, 16)).mean()
            self.accelerator.backward(loss)
            self.opt.step()
            self.accelerator.wait_for_everyone()
            if self.is_main and step % 500 == 0:
                self.save_sample(4)


if __name__ == "__main__":
    Trainer(Generator()).train(10_000)
"""


def test_main_process_sampling_through_the_prepared_model_kept_on_self_is_flagged(lint):
    source = TRAINER.replace("{sample_body}", "        return self.gen(torch.randn(count, 16))")
    # at the guarded call, and at the forward inside the helper only that rank reaches
    forward = _row_of(source, "return self.gen(torch.randn(count, 16))")
    assert _ddp007_rows(lint, source) == sorted([forward, _row_of(source, "self.save_sample(4)")])


def test_forward_in_a_helper_every_rank_also_calls_is_named_at_the_guarded_call_only(lint):
    source = TRAINER.replace("{sample_body}", "        return self.gen(torch.randn(count, 16))").replace(
        "            self.accelerator.wait_for_everyone()\n",
        "            self.accelerator.wait_for_everyone()\n            warmup = self.sample(2)\n",
    )
    assert "warmup = self.sample(2)" in source
    assert _ddp007_rows(lint, source) == [_row_of(source, "self.save_sample(4)")]


def test_main_process_sampling_through_the_unwrapped_model_is_left_alone(lint):
    source = TRAINER.replace(
        "{sample_body}", "        plain = self.accelerator.unwrap_model(self.gen)\n        return plain(torch.randn(count, 16))"
    )
    assert _ddp007_rows(lint, source) == []


FABRIC_SCRIPT = """
import torch
from lightning.fabric import Fabric


def main():
    fabric = Fabric(accelerator="cuda", devices=4, strategy="ddp")
    fabric.launch()
    model = torch.nn.Linear(8, 8)
{setup}
    fabric.barrier()


if __name__ == "__main__":
    main()
"""


def test_fabric_setup_of_a_model_on_rank_zero_only_is_flagged(lint):
    source = FABRIC_SCRIPT.replace("{setup}", "    if fabric.global_rank == 0:\n        model = fabric.setup(model)")
    assert _ddp007_rows(lint, source) == [_row_of(source, "model = fabric.setup(model)")]


def test_fabric_setup_on_every_rank_is_left_alone(lint):
    source = FABRIC_SCRIPT.replace("{setup}", "    model = fabric.setup(model)")
    assert _ddp007_rows(lint, source) == []
