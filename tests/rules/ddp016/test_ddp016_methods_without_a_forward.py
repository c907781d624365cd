"""DDP016 on calls of the wrapped module's own methods in a training step: only a method that
runs a forward on new inputs bypasses DDP. Setting modes (`model.module.train_mode()`, no
inputs) or computing the loss from what the DDP model itself returned
(`model.module.compute_objective(logits, target)`) does not."""

from __future__ import annotations

STEP = """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, loader, optimizer):
    model.module.train_mode()
    for batch in loader:
        {forward}
        loss = {loss}
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


dist.init_process_group("nccl")
model = DDP(build_model().cuda(), device_ids=[local_rank])
train(model, loader, optimizer)
"""


def _codes(lint, forward, loss):
    return [code for _, code in lint(STEP.format(forward=forward, loss=loss), ["DDP016"])]


def test_mode_switch_and_loss_over_ddp_outputs_are_left_alone(lint):
    assert _codes(lint, "logits = model(batch['x'])", "model.module.compute_objective(logits, batch['y'])") == []


def test_method_running_its_own_forward_on_the_inputs_is_reported(lint):
    # `predict` takes the raw inputs: the wrapped module's forward runs outside DDP.
    assert _codes(lint, "logits = model.module.predict(batch['x'])", "criterion(logits, batch['y'])") == ["DDP016"]
