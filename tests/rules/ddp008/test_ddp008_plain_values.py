"""DDP008 stays silent on a file the project writes with plain Python values only (an index of
file names and an epoch number, built as a literal or item by item): no tensor in it, so it
loads on no GPU. A value that may be a tensor (a state dict, a parameter of unknown type) keeps
the load flagged."""

from __future__ import annotations

SCRIPT = """
import torch
import torch.distributed as dist


def write_index(folder, tag: str, epoch: int = None):
    index = {}
    index["weights"] = f"{tag}_weights.pt"
    index["format"] = "v2"
    if epoch is not None:
        index["epoch"] = EPOCH
    torch.save(index, folder + "/index.pt")


def read_index(folder):
    return torch.load(folder + "/index.pt")


dist.init_process_group("nccl")
write_index("runs", "net", trainer.epoch)
print(read_index("runs"))
"""


def _script(lint, epoch: str = "epoch", signature: str = "tag: str, epoch: int = None") -> list[tuple[int, str]]:
    source = SCRIPT.replace("EPOCH", epoch).replace("tag: str, epoch: int = None", signature)
    return lint(source, select=["DDP008"])


def test_index_of_strings_and_an_int_parameter_is_left_alone(lint):
    assert _script(lint) == []


def test_index_with_an_optional_int_parameter_is_left_alone(lint):
    assert _script(lint, signature="tag: str, epoch: Optional[int] = None") == []


def test_index_holding_a_state_dict_is_flagged(lint):
    assert _script(lint, epoch="model.state_dict()") == [(15, "DDP008")]


def test_index_with_an_unannotated_parameter_is_flagged(lint):
    assert _script(lint, signature="tag, epoch=None") == [(15, "DDP008")]


def test_literal_dict_of_numbers_is_left_alone(lint):
    source = """
    import torch
    import torch.distributed as dist

    dist.init_process_group("nccl")
    torch.save({"epoch": 7, "lr": 0.1, "name": "run"}, "meta.pt")
    meta = torch.load("meta.pt")
    """
    assert lint(source, select=["DDP008"]) == []


def test_literal_dict_with_a_tensor_is_flagged(lint):
    source = """
    import torch
    import torch.distributed as dist

    dist.init_process_group("nccl")
    torch.save({"epoch": 7, "best": best_score}, "meta.pt")
    meta = torch.load("meta.pt")
    """
    assert lint(source, select=["DDP008"]) == [(6, "DDP008")]
