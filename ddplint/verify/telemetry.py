"""Per-rank telemetry: one JSON object per line, appended as things happen.

The probe writes each record with a single `os.write` on a file opened with O_APPEND, so a
record is on disk (in the page cache) the moment it is written: a rank that is killed, that
crashes or that hangs loses nothing recorded before. The launcher reads the files back, also
while the ranks run (live progress) and after a hard kill (a torn last line is skipped).

Record kinds (field `kind`); every record has `t`, wall-clock seconds (time.time()), so that ranks
of one node share a clock:
    start       rank, local_rank, world_size, node_rank, host, pid, pgid, script, emulated_gpus
                (verify --cpu: the number of logical GPUs presented, else null)
    init        init_process_group returned: backend
    loader      a DataLoader was built: loader (id), site (file, line), dataset, dataset_len,
                sampler, sampler_len, shuffle, num_replicas, batch_size, num_workers, seed
    loader_error  DataLoader(...) raised: site, error
    epoch       an iterator over a loader started: loader, n (its count), sampler_epoch
    batch       a batch was handed out: loader, step (rank-wide count of batches), train (training
                batches before this one: the step budget's count), wait (s spent in __next__),
                indices (dataset indices drawn since the previous batch record), bw (backward
                passes so far on this rank: those after a batch mean its loader trains),
                digests (IterableDataset loaders only: one content digest per item)
    coll_begin  a collective was entered: op, site (file, line), size (shape of its first tensor)
    coll_end    that collective returned: op, dur (s)
    bucket      DDP's all-reduce of one gradient bucket (timed by a communication hook): t (launch),
                dur (s until its future completed), index, numel, bw (the backward pass it belongs to)
    opt_step    an optimizer stepped (torch's global post-step hook): n (its count on this rank), bw
                (backward passes so far), params (first 4 steps only: per DDP model, the float64 sum
                of each parameter; equal on every rank while DDP keeps the replicas in step)
    write       a file was opened for writing before the first batch (audit hook): path (absolute),
                site (file, line, lines); at most 512 per rank
    dp          nn.DataParallel built: device_ids, output_device, param_devices
    ddp         DistributedDataParallel built: device_ids, param_devices, timed_buckets (verify's
                communication hook is on it: each bucket all-reduce makes a bucket record)
    device      torch.cuda.set_device: device
    cuda_request  verify --cpu: a logical GPU was asked for: what (model, tensor, set_device, ddp,
                init_process_group), device ("cuda:i"), site; once per (what, device)
    load        torch.load returned: devices (where its tensors are, logical under --cpu), own
                (the rank's device), map_location (null when none was given), site
    end         the probe is stopping the rank: reason (max-steps | finished | exception |
                not-emulatable), exit_code, steps, trained (training steps), bw, error, traceback (for exceptions),
                missing_path and site (a FileNotFoundError: the data is not on this machine)
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Iterator, Optional

# Environment the launcher hands to every rank.
ENV_DIR = "DDPLINT_VERIFY_DIR"
ENV_MAX_STEPS = "DDPLINT_VERIFY_MAX_STEPS"
ENV_EPOCH_STEPS = "DDPLINT_VERIFY_EPOCH_STEPS"
ENV_NODE_RANK = "DDPLINT_VERIFY_NODE_RANK"
ENV_PASSTHROUGH = "DDPLINT_VERIFY_SHOW_OUTPUT"
# Multi-node without a shared directory: ranks off node 0 push their file through the
# rendezvous' c10d store, and local rank 0 of node 0 collects them until this wall-clock deadline.
ENV_COLLECT_UNTIL = "DDPLINT_VERIFY_COLLECT_UNTIL"
STORE_PREFIX = "ddplint_verify/"


def rank_file(directory: Path, rank: int) -> Path:
    return Path(directory) / f"rank-{rank}.jsonl"


def stack_file(directory: Path, rank: int) -> Path:
    """Every thread's Python stack, written by the rank when the launcher signals it at the timeout."""
    return Path(directory) / f"rank-{rank}.stack"


def rank_log(directory: Path, rank: int) -> Path:
    """The rank's own stdout and stderr (the probe redirects them here)."""
    return Path(directory) / f"rank-{rank}.log"


class TelemetryWriter:
    """Appends records to one rank's file; never raises into the training script."""

    def __init__(self, path: Path):
        self.path = Path(path)
        # Truncated first: a shared directory may hold this rank's file from an earlier run.
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)

    def write(self, kind: str, **fields) -> None:
        fields["kind"] = kind
        fields.setdefault("t", time.time())
        line = json.dumps(fields, separators=(",", ":"), default=str) + "\n"
        try:
            os.write(self._fd, line.encode("utf-8"))
        except OSError:
            pass  # a full disk must not take the training script down with it


    def write_batch(self, began: float, loader: int, step: int, wait: float, backward_calls: int, trained: int,
                    indices) -> None:
        """The per-batch record, formatted by hand: it is on every training step's path, and this
        is several times cheaper than json.dumps (floats' repr and ints are valid JSON)."""
        line = (f'{{"kind":"batch","t":{began!r},"loader":{loader:d},"step":{step:d},"wait":{wait!r},'
                f'"bw":{backward_calls:d},"train":{trained:d},"indices":[{",".join(map(str, indices))}]}}\n')
        try:
            os.write(self._fd, line.encode("ascii"))
        except OSError:
            pass


def read_records(path: Path) -> list[dict]:
    """Every complete record in a rank file (a line torn by a kill is skipped)."""
    return list(_parse_lines(Path(path).read_bytes().splitlines()))


def _parse_lines(lines) -> Iterator[dict]:
    for raw in lines:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict) and "kind" in record:
            yield record


class TelemetryTail:
    """Reads the rank files of a directory incrementally (live progress while the ranks run)."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._offsets: dict[Path, int] = {}
        self.steps: dict[int, int] = {}  # training steps (the budget's count), not evaluation batches
        self.data_wait: dict[int, float] = {}  # seconds each rank spent waiting for its batches
        self.ended: set[int] = set()
        self.node_of: dict[int, int] = {}  # rank -> the node_rank its probe recorded

    def poll(self) -> None:
        for path in sorted(self.directory.glob("rank-*.jsonl")):
            rank = _rank_of(path)
            if rank is None:
                continue
            for record in self._new_records(path):
                if record["kind"] == "start":
                    self.node_of[rank] = int(record.get("node_rank", 0))
                elif record["kind"] == "batch":
                    self.steps[rank] = int(record.get("train", record.get("step", 0)))
                    self.data_wait[rank] = self.data_wait.get(rank, 0.0) + float(record.get("wait", 0.0))
                elif record["kind"] == "end":
                    self.ended.add(rank)
                    self.steps[rank] = int(record.get("trained", self.steps.get(rank, 0)))
                self.steps.setdefault(rank, 0)

    def _new_records(self, path: Path) -> Iterator[dict]:
        offset = self._offsets.get(path, 0)
        try:
            with open(path, "rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except OSError:
            return iter(())
        complete = data[: data.rfind(b"\n") + 1]  # leave a half-written line for the next poll
        self._offsets[path] = offset + len(complete)
        return _parse_lines(complete.splitlines())


def _rank_of(path: Path) -> Optional[int]:
    stem = path.name[len("rank-"): -len(".jsonl")]
    return int(stem) if stem.isdigit() else None


def load_run(directory: Path, since: float = 0.0) -> dict[int, list[dict]]:
    """rank -> its records, for every rank file whose run started at or after `since` (a shared
    directory may still hold the files of an earlier run)."""
    runs: dict[int, list[dict]] = {}
    for path in Path(directory).glob("rank-*.jsonl"):
        rank = _rank_of(path)
        if rank is None:
            continue
        records = read_records(path)
        start = next((r for r in records if r["kind"] == "start"), None)
        if start is None or float(start.get("t", 0)) < since:
            continue
        runs[rank] = records
    return dict(sorted(runs.items()))
