"""Per-rank measurements, summarised from the telemetry records (see telemetry.py).

Times are wall-clock seconds (ranks of one node share the clock). A step is the time from one
batch request to the next within one epoch: the data wait (inside the loader's __next__), the
time in torch.distributed collectives called from Python, and the rest, counted as compute.
DistributedDataParallel's gradient all-reduce runs inside backward() in C++ and is therefore
part of compute.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

LOG_TAIL_LINES = 15


@dataclass
class Epoch:
    loader: int
    number: int  # how many times this loader had been iterated before on this rank
    sampler_epoch: Optional[int]
    indices: list = field(default_factory=list)
    batches: int = 0
    began: Optional[float] = None
    digests: list = field(default_factory=list)  # IterableDataset loaders: one per item
    last_batch_at: Optional[float] = None


@dataclass
class Collective:
    op: str
    began: float
    duration: Optional[float]  # None: still inside when the rank stopped (a hang)
    line: Optional[int] = None  # where the script called it (its innermost frame in the script)
    file: str = ""
    size: Optional[list] = None  # shape of its first tensor
    lines: tuple = ()  # every line of the script on the way to it, innermost first


@dataclass
class Step:
    began: float
    data_wait: float
    collective_wait: float
    duration: float

    @property
    def compute(self) -> float:
        return max(self.duration - self.data_wait - self.collective_wait, 0.0)


@dataclass
class RankSummary:
    rank: int
    records: list = field(repr=False, default_factory=list)
    world_size: int = 1
    node_rank: int = 0
    host: str = ""
    pid: Optional[int] = None
    started: Optional[float] = None
    init_at: Optional[float] = None
    backend: Optional[str] = None
    loaders: dict = field(default_factory=dict)  # loader id -> its "loader" record
    training_loaders: set = field(default_factory=set)  # loader ids whose batches fed a backward pass
    epochs: list = field(default_factory=list)
    batches: list = field(default_factory=list)  # "batch" records
    collectives: list = field(default_factory=list)
    buckets: list = field(default_factory=list)  # "bucket" records: DDP's gradient all-reduce, per bucket
    data_parallel: list = field(default_factory=list)
    ddp: list = field(default_factory=list)
    set_devices: list = field(default_factory=list)
    cuda_device: Optional[str] = None
    emulated_gpus: Optional[int] = None  # verify --cpu: logical GPUs presented to the rank
    cuda_requests: list = field(default_factory=list)  # "cuda_request" records (verify --cpu)
    loads: list = field(default_factory=list)  # "load" records: where torch.load put tensors
    loader_errors: list = field(default_factory=list)
    optimizer_steps: list = field(default_factory=list)  # "opt_step" records: bw so far, parameter fingerprints
    writes: list = field(default_factory=list)  # "write" records: files opened for writing before the first batch
    stack: str = ""  # Python stacks written at the timeout
    end: Optional[dict] = None
    last_seen: Optional[float] = None
    log_tail: str = ""

    # -- derived ---------------------------------------------------------------------------------
    @property
    def steps(self) -> int:
        return len(self.batches)

    @property
    def training_steps(self) -> int:
        """Training batches, the step budget's count (evaluation batches are not steps of it)."""
        if self.end is not None and "trained" in self.end:
            return int(self.end["trained"])
        counted = [int(b["train"]) for b in self.batches if "train" in b]
        return max(counted) if counted else self.steps  # records without the count

    @property
    def first_batch_at(self) -> Optional[float]:
        return self.batches[0]["t"] if self.batches else None

    @property
    def crashed(self) -> bool:
        return self.end is not None and self.end.get("reason") == "exception"

    def status(self, timed_out: bool) -> str:
        if self.end is None:
            return "stopped at the timeout" if timed_out else "died without a last record (killed or aborted)"
        reason = self.end.get("reason")
        if reason == "max-steps":
            return f"stopped after {self.training_steps} steps"
        if reason == "finished":
            code = self.end.get("exit_code", 0)
            return "script finished" if code == 0 else f"script exited with code {code}"
        if reason == "not-emulatable":
            return "stopped at a GPU-only call (verify --cpu)"
        error = str(self.end.get("error", "unknown error"))
        return f"crashed: {error if len(error) <= 60 else error[:57] + '...'}"

    def wait_before_first_batch(self, until: float) -> tuple[float, dict]:
        """Seconds blocked in collectives between init_process_group (or the start) and the first
        batch, and the seconds per collective op. A collective never left counts up to `until`."""
        since = self.init_at or self.started or 0.0
        limit = self.first_batch_at if self.first_batch_at is not None else until
        per_op: dict = {}
        for coll in self.collectives:
            if since <= coll.began < limit:
                duration = coll.duration if coll.duration is not None else max(until - coll.began, 0.0)
                per_op[coll.op] = per_op.get(coll.op, 0.0) + duration
        return sum(per_op.values()), per_op

    def time_to_first_batch(self, until: float) -> Optional[float]:
        """From init_process_group (or the start) to the first batch; to `until` if none came."""
        since = self.init_at or self.started
        if since is None:
            return None
        return (self.first_batch_at if self.first_batch_at is not None else until) - since

    def open_collective(self) -> Optional[Collective]:
        return next((c for c in reversed(self.collectives) if c.duration is None), None)

    def steps_timed(self) -> list[Step]:
        """Consecutive batch pairs of one epoch. The rank's very first step is left out (warm-up:
        DDP's first backward builds its buckets); an epoch boundary is not a step."""
        steps = []
        for number, (previous, current) in enumerate(zip(self.batches, self.batches[1:])):
            if number == 0 or current.get("_epoch") != previous.get("_epoch"):
                continue
            body_start = previous["t"] + previous["wait"]
            waited = sum(c.duration or 0.0 for c in self.collectives if body_start <= c.began < current["t"])
            steps.append(Step(previous["t"], previous["wait"], waited, current["t"] - previous["t"]))
        return steps

    def step_medians(self) -> Optional[dict]:
        steps = self.steps_timed()
        if not steps:
            return None
        return {
            "steps_timed": len(steps),
            "step_s": statistics.median(s.duration for s in steps),
            "data_wait_s": statistics.median(s.data_wait for s in steps),
            "compute_s": statistics.median(s.compute for s in steps),
            "collective_wait_s": statistics.median(s.collective_wait for s in steps),
        }

    def logical_devices(self) -> list:
        """verify --cpu: the logical GPUs this rank asked for, the most telling first (where the
        model went, DDP's device_ids, set_device, the process group's device, then tensors)."""
        order = ("model", "ddp", "set_device", "init_process_group", "data_parallel", "tensor")
        requests = sorted(self.cuda_requests, key=lambda r: order.index(r.get("what")) if r.get("what") in order else 9)
        return list(dict.fromkeys(r["device"] for r in requests if r.get("device")))

    def devices(self) -> list:
        """Devices this rank computed on, the most telling first: the parameter devices of the
        wrapped models, then the CUDA device current at the first batch, then set_device calls.
        Under verify --cpu the logical GPUs it asked for come first."""
        if self.emulated_gpus and self.logical_devices():
            return self.logical_devices()  # the parameters are on the CPU only because of the rehearsal
        names = [d for record in self.ddp + self.data_parallel for d in record.get("param_devices", [])]
        names += [self.cuda_device, *self.set_devices]
        return list(dict.fromkeys(_device_name(n) for n in names if n))


def _device_name(name: str) -> str:
    return f"cuda:{name}" if name.isdigit() else name


def summarise(rank: int, records: list, log_path: Optional[Path] = None,
              stack_path: Optional[Path] = None) -> RankSummary:
    summary = RankSummary(rank=rank, records=records)
    open_collectives: list = []
    current_epoch = None
    last_batch = None
    for record in records:
        kind = record["kind"]
        summary.last_seen = record.get("t", summary.last_seen)
        if kind in ("batch", "end") and last_batch is not None and record.get("bw", 0) > last_batch.get("bw", 0):
            summary.training_loaders.add(last_batch.get("loader"))
        if kind == "start":
            summary.world_size = int(record.get("world_size", 1))
            summary.node_rank = int(record.get("node_rank", 0))
            summary.host = record.get("host", "")
            summary.pid = record.get("pid")
            summary.started = record["t"]
            summary.emulated_gpus = record.get("emulated_gpus")
        elif kind == "init":
            summary.init_at = record["t"]
            summary.backend = record.get("backend")
            summary.world_size = int(record.get("world_size", summary.world_size))
        elif kind == "loader":
            summary.loaders[record["loader"]] = record
        elif kind == "epoch":
            current_epoch = Epoch(record["loader"], int(record.get("n", 0)), record.get("sampler_epoch"),
                                  began=record.get("t"))
            summary.epochs.append(current_epoch)
        elif kind == "batch":
            _add_batch(summary, record, current_epoch)
            last_batch = record
        elif kind == "coll_begin":
            site = record.get("site") or {}
            coll = Collective(record["op"], record["t"], None, site.get("line"), site.get("file", ""),
                              record.get("size"), tuple(site.get("lines") or ()))
            summary.collectives.append(coll)
            open_collectives.append(coll)
        elif kind == "coll_end" and open_collectives:
            coll = open_collectives.pop()
            coll.duration = float(record.get("dur", 0.0))
        elif kind == "bucket":
            summary.buckets.append(record)
        elif kind == "dp":
            summary.data_parallel.append(record)
        elif kind == "ddp":
            summary.ddp.append(record)
        elif kind == "device":
            summary.set_devices.append(record.get("device"))
        elif kind == "cuda_request":
            summary.cuda_requests.append(record)
        elif kind == "load":
            summary.loads.append(record)
        elif kind == "loader_error":
            summary.loader_errors.append(record)
        elif kind == "opt_step":
            summary.optimizer_steps.append(record)
        elif kind == "write":
            summary.writes.append(record)
        elif kind == "end":
            summary.end = record
    if log_path is not None:
        summary.log_tail = read_tail(log_path)
    if stack_path is not None:
        try:
            summary.stack = Path(stack_path).read_text(errors="replace")
        except OSError:
            pass
    return summary


def _add_batch(summary: RankSummary, record: dict, epoch: Optional[Epoch]) -> None:
    record["_epoch"] = id(epoch)
    if epoch is not None:
        epoch.batches += 1
        epoch.indices.extend(record.get("indices", []))
        epoch.digests.extend(record.get("digests") or [])
        epoch.last_batch_at = record.get("t")
    if record.get("cuda_device") and not summary.emulated_gpus:
        summary.cuda_device = record["cuda_device"]
    summary.batches.append(record)


@dataclass
class Spawner:
    """The script's own main process when it starts its ranks itself (spawn.py)."""
    spawns: list = field(default_factory=list)  # its "spawn" records: nprocs, start_method, site, cuda_devices
    ended: bool = False
    error: Optional[str] = None  # it crashed: the exception
    worker_output: str = ""  # the tail of a worker's output that never became a rank (died at start-up)


def load_spawner(directory: Path, since: float = 0.0) -> Optional[Spawner]:
    from ddplint.verify.spawn import SPAWNER_NAME
    from ddplint.verify.telemetry import read_records

    try:
        records = read_records(Path(directory) / f"{SPAWNER_NAME}.jsonl")
    except OSError:
        return None
    if not records or records[0].get("kind") != "start" or float(records[0].get("t", 0)) < since:
        return None
    spawner = Spawner(spawns=[r for r in records if r["kind"] == "spawn"])
    end = next((r for r in records if r["kind"] == "end"), None)
    worker_logs = sorted(Path(directory).glob("worker-*.log"), key=lambda path: path.stat().st_mtime)
    spawner.worker_output = next((tail for tail in map(read_tail, worker_logs) if tail), "")
    if end is not None:
        spawner.ended = True
        if end.get("reason") in ("exception", "not-emulatable"):
            spawner.error = str(end.get("error") or "unknown error")
    return spawner


# torch 2.13 without numpy warns on import, in every process: not what a user looks for in a tail.
KNOWN_NOISE = ("UserWarning: Failed to initialize NumPy", "cpu = _conversion_method_template(")


def read_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last lines of a process's output, without blank lines and known import-time noise."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return ""
    kept = [line for line in text.splitlines() if line.strip() and not any(n in line for n in KNOWN_NOISE)]
    return "\n".join(kept[-lines:])
