"""DDP016 beside a DDP-wrapped model that no optimizer steps: a frozen feature extractor (a CLIP
encoder) wrapped in DDP while only a generator is trained. Its forward through `.module` leaves
no gradient unreduced that anything would use; when an optimizer does step the wrapped model's
parameters, the same forward is the bug."""

from __future__ import annotations

SCRIPT = """
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("nccl")
    encoder = DDP(build_encoder().cuda(), device_ids=[local_rank])
    generator = DDP(build_generator().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam({params}, lr=1e-4)
    for images in loader:
        noise = generator(images)
        loss = -(encoder.module.encode(images + noise) - encoder.module.encode(images)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
"""


def _codes(lint, params):
    return [code for _, code in lint(SCRIPT.format(params=params), ["DDP016"])]


def test_frozen_wrapped_encoder_is_left_alone(lint):
    assert _codes(lint, "generator.parameters()") == []


def test_frozen_encoder_with_a_traced_parameter_list_is_left_alone(lint):
    source = SCRIPT.format(params="params").replace(
        "    optimizer = torch.optim.Adam(params", "    params = [p for p in generator.parameters() if p.requires_grad]\n    optimizer = torch.optim.Adam(params"
    )
    assert [code for _, code in lint(source, ["DDP016"])] == []


def test_encoder_the_optimizer_steps_is_reported(lint):
    assert _codes(lint, "list(generator.parameters()) + list(encoder.parameters())") == ["DDP016", "DDP016"]
