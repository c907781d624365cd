import enum
from dataclasses import dataclass


class Strategy(enum.Enum):
    DataParallel = "dp"
    TensorParallel = "tp"
    PipelineParallel = "pp"


@dataclass
class DataParallel:
    """Config block for the data-parallel dimension of the device mesh."""
    size: int = 8
    shard_optimizer: bool = True


mesh_cfg = {"dp": DataParallel(size=8), "tp": 2}
strategy = Strategy.DataParallel
print(strategy.value, mesh_cfg["dp"].size)
