"""DDP008 where the only map_location is the CPU fallback of a run without GPUs: the other arm of
an `if` (or of a conditional map_location) maps to the CPU, so the arm without one is the GPU run
that every rank takes, and it restores the tensors onto the GPU that saved them."""

from __future__ import annotations

SCRIPT = """
import torch
import torch.distributed as dist

dist.init_process_group("nccl")

class Resumer:
    def __init__(self, device, on_cpu):
        self.device = device
        self.on_cpu = on_cpu

    def read(self, path):
        BODY

Resumer(torch.device("cuda", 0), False).read("last.pt")
"""


def _read(lint, body: str) -> list[tuple[int, str]]:
    return lint(SCRIPT.replace("BODY", body), select=["DDP008"])


# -- an `if` whose other arm maps to the CPU ----------------------------------------------------
def test_load_beside_a_cpu_mapped_arm_is_flagged(lint):
    body = """if "cuda" in str(self.device):
            return torch.load(path)
        else:
            return torch.load(path, map_location=lambda storage, loc: storage)"""
    assert _read(lint, body) == [(13, "DDP008")]


def test_load_beside_a_torch_device_cpu_arm_is_flagged(lint):
    body = """if self.on_cpu:
            state = torch.load(path, map_location=torch.device("cpu"))
        else:
            state = torch.load(path)
        return state"""
    assert _read(lint, body) == [(15, "DDP008")]


def test_load_beside_an_arm_mapping_to_the_ranks_device_is_left_alone(lint):
    body = """if self.on_cpu:
            state = torch.load(path)
        else:
            state = torch.load(path, map_location=self.device)
        return state"""
    assert _read(lint, body) == []


def test_load_beside_a_cpu_arm_on_the_single_process_path_is_left_alone(lint):
    body = """if dist.is_initialized():
            state = torch.load(path, map_location="cpu")
        else:
            state = torch.load(path)
        return state"""
    assert _read(lint, body) == []


# -- a conditional map_location that is None on the GPU run -------------------------------------
def test_map_location_none_unless_on_cpu_is_flagged(lint):
    body = 'return torch.load(path, map_location=(torch.device("cpu") if self.on_cpu else None))'
    assert _read(lint, body) == [(12, "DDP008")]


def test_map_location_none_first_then_cpu_is_flagged(lint):
    body = 'return torch.load(path, map_location=None if torch.cuda.is_available() else "cpu")'
    assert _read(lint, body) == [(12, "DDP008")]


def test_map_location_choosing_between_devices_is_left_alone(lint):
    body = 'return torch.load(path, map_location=("cpu" if self.on_cpu else self.device))'
    assert _read(lint, body) == []


def test_map_location_none_only_on_the_single_process_path_is_left_alone(lint):
    body = 'return torch.load(path, map_location=("cpu" if dist.is_initialized() else None))'
    assert _read(lint, body) == []


def test_map_location_none_unless_a_device_is_given_is_left_alone(lint):
    body = "return torch.load(path, map_location=(self.device if self.on_cpu else None))"
    assert _read(lint, body) == []


# -- a file of NumPy arrays ---------------------------------------------------------------------
NUMPY_FILE = """
import torch
import torch.distributed as dist

dist.init_process_group("nccl")

def centers(path, k):
    table = torch.load(path)
    return USE

centers("bounds.pt", 32)
"""


def test_load_whose_element_goes_to_from_numpy_is_left_alone(lint):
    assert lint(NUMPY_FILE.replace("USE", "torch.from_numpy(table[k])"), select=["DDP008"]) == []


def test_load_used_as_tensors_is_flagged(lint):
    assert lint(NUMPY_FILE.replace("USE", "table[k].float()"), select=["DDP008"]) == [(7, "DDP008")]
