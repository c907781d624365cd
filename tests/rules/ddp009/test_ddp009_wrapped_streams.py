"""DDP009 on a stream built over another stream: a class that groups, buffers or shuffles what
it iterates yields this rank's share when the stream it is handed is split by rank, and the
whole stream when it is not. Each case is a small project (the streams in their own module)."""

from __future__ import annotations

from project_support import project_findings

STREAMS = """\
import torch.distributed as dist
from torch.utils.data import IterableDataset


class Lines(IterableDataset):
    def __init__(self, path):
        self.path = path

    def __iter__(self):
        with open(self.path) as handle:
            for index, line in enumerate(handle):
                if index % dist.get_world_size() == dist.get_rank():
                    yield line


class AllLines(IterableDataset):
    def __init__(self, path):
        self.path = path

    def __iter__(self):
        with open(self.path) as handle:
            yield from handle


class Batched(IterableDataset):
    def __init__(self, stream, size):
        self.stream = stream
        self.size = size

    def __iter__(self):
        batch = []
        for item in self.stream:
            batch.append(item)
            if len(batch) == self.size:
                yield batch
                batch = []
"""

TRAIN = """\
import torch.distributed as dist
from torch.utils.data import DataLoader
from streams import {inner}, Batched

dist.init_process_group("nccl")
lines = {inner}("train.txt")
loader = DataLoader(Batched(lines, 32), batch_size=None)
for batch in loader:
    step(batch)
"""


def _findings(tmp_path, inner):
    return project_findings(tmp_path, {"streams.py": STREAMS, "train.py": TRAIN.format(inner=inner)}, ["DDP009"])


def test_a_batching_stream_over_an_unsplit_stream_is_reported(tmp_path):
    assert _findings(tmp_path, "AllLines") == [("train.py", 7)]


def test_a_batching_stream_over_a_stream_split_by_rank_is_left_alone(tmp_path):
    assert _findings(tmp_path, "Lines") == []


ONE_FILE_SCRIPT = """
dist.init_process_group("nccl")
loader = DataLoader(Batched({inner}("train.txt"), 32), batch_size=None)
for batch in loader:
    step(batch)
"""


def test_in_one_file_the_wrapper_over_an_unsplit_stream_is_reported(lint):
    source = "from torch.utils.data import DataLoader\n" + STREAMS + ONE_FILE_SCRIPT.format(inner="AllLines")
    assert [code for _, code in lint(source, ["DDP009"])] == ["DDP009"]


def test_in_one_file_the_wrapper_over_a_split_stream_is_left_alone(lint):
    source = "from torch.utils.data import DataLoader\n" + STREAMS + ONE_FILE_SCRIPT.format(inner="Lines")
    assert lint(source, ["DDP009"]) == []
