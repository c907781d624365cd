"""Turn the per-rank measurements into verdicts.

Each `judge_*` function looks at what every rank recorded and returns a `Judgement`: confirmed,
refuted or inconclusive, with an evidence sentence that carries the numbers. `judge_run` applies
them to each static finding, and adds a runtime-only finding (a `Diagnostic` like any other) for
what the run shows although no static finding predicted it: a rule's problem the analysis missed,
and a rank imbalance (DDP100), which no static rule can see.

Thresholds are ratios plus absolute floors so that a slow, loaded machine does not flip a verdict.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from ddplint.diagnostics import Diagnostic, Location
from ddplint.verify.ranks import RankSummary

CONFIRMED, REFUTED, INCONCLUSIVE = "confirmed", "refuted", "inconclusive"
IMBALANCE_CODE = "DDP100"
IMBALANCE_MESSAGE = "ranks are out of balance: some ranks wait for others every step"

# DDP004: a rank > 0 that spends at least this long blocked in collectives before its first batch,
# while rank 0 spends at most half of that in them, is waiting for rank-0-only work.
DDP004_WAIT_S = 0.5
# DDP100: per-step medians, in seconds and shares of the step.
IMBALANCE_FLOOR_S = 0.010
IMBALANCE_SHARE = 0.20
IMBALANCE_RATIO = 3.0
MIN_TIMED_STEPS = 3


@dataclass(frozen=True)
class Judgement:
    status: str
    evidence: str
    row: Optional[int] = None  # where the evidence points in the script, when it knows


@dataclass(frozen=True)
class Verdict:
    finding: Diagnostic
    status: str
    evidence: str
    source: str  # "static": a finding of the static check; "runtime": seen only when running
    located: bool = True  # runtime-only findings may have no line to point at


@dataclass(frozen=True)
class RunContext:
    ranks: Sequence[RankSummary]
    script: str
    stopped_at: float  # when the launcher stopped waiting: open collectives count up to here
    nvml: Optional[dict] = None
    timed_out: bool = False

    @property
    def emulated(self) -> bool:
        """verify --cpu: devices are the logical GPUs the ranks asked for."""
        return any(r.emulated_gpus for r in self.ranks)

    @property
    def world_size(self) -> int:
        """The process group's size; 1 when no rank joined one (torchrun started N independent
        copies of a single-process script: each reading everything is then no bug of the script)."""
        sizes = [r.world_size for r in self.ranks if r.init_at is not None]
        return max(sizes) if sizes else 1


def _pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.0f} %" if whole > 0 else "n/a"


def _ranks_text(ranks: Sequence[int]) -> str:
    """"rank 3", "ranks 0, 1", "ranks 0-7, 9": runs of three or more collapse into a range."""
    ranks = sorted(ranks)
    parts, start = [], 0
    for i in range(1, len(ranks) + 1):
        if i == len(ranks) or ranks[i] != ranks[i - 1] + 1:
            run = ranks[start:i]
            parts.append(f"{run[0]}-{run[-1]}" if len(run) >= 3 else ", ".join(map(str, run)))
            start = i
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(parts)


def _same_file(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


# -- DDP001: every rank reads the whole dataset ---------------------------------------------------
def judge_ddp001(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    """Confirmed when on every rank the loader's sampler covers the whole dataset (world size > 1).

    Without a static finding to point at (row None), only training loaders count: evaluating the
    whole set on every rank is a deliberate choice the static rule leaves alone too."""
    sites = _iterated_loader_sites(ctx, row, training_only=row is None)
    if not sites:
        where = f" built on line {row}" if row else ""
        return Judgement(INCONCLUSIVE, f"no DataLoader{where} was iterated on any rank, so there is nothing to compare")
    judgements = [_judge_loader_sharding(ctx, site_row, per_rank) for site_row, per_rank in sites.items()]
    return _strongest(judgements)


def _iterated_loader_sites(ctx: RunContext, row: Optional[int], training_only: bool) -> dict:
    """line of the DataLoader(...) call -> {rank: (loader record, first epoch)} for loaders that
    were iterated; only the loader on `row` when that is given and was seen."""
    sites: dict = {}
    for rank in ctx.ranks:
        for loader_id, loader in rank.loaders.items():
            first = next((e for e in rank.epochs if e.loader == loader_id and e.batches), None)
            if first is None or (training_only and loader_id not in rank.training_loaders):
                continue
            site = loader.get("site") or {}
            site_row = site.get("line") if _same_file(site.get("file", ""), ctx.script) else None
            sites.setdefault(site_row, {})[rank.rank] = (loader, first)
    if row is not None and row in sites:
        return {row: sites[row]}
    return sites


def _judge_loader_sharding(ctx: RunContext, site_row, per_rank: dict) -> Judgement:
    if ctx.world_size < 2:
        return Judgement(INCONCLUSIVE, "no process group of more than one rank was formed (no "
                         "init_process_group, or world size 1): sharding cannot be observed", site_row)
    loaders = [loader for loader, _ in per_rank.values()]
    if any(loader.get("iterable") for loader in loaders):
        return Judgement(INCONCLUSIVE, "the loader reads an IterableDataset: it shards (or not) inside the "
                         "dataset, where the indices are not visible", site_row)
    whole = [r for r, (loader, _) in per_rank.items() if _reads_whole_dataset(loader)]
    sharded = [r for r, (loader, _) in per_rank.items() if _is_sharded(loader)]
    sample = loaders[0]
    overlap = _overlap_sentence(per_rank)
    if len(per_rank) >= 2 and len(whole) == len(per_rank):
        return Judgement(CONFIRMED, (
            f"{sample['sampler']} on {_ranks_text(sorted(whole))} of world size {ctx.world_size}: "
            f"len(sampler) = {sample['sampler_len']} = len(dataset) on every rank, so each rank reads the whole "
            f"dataset{overlap}"), site_row)
    if len(per_rank) >= 2 and len(sharded) == len(per_rank):
        return Judgement(REFUTED, (
            f"{sample['sampler']} on {_ranks_text(sorted(sharded))}: len(sampler) = {sample['sampler_len']} of "
            f"len(dataset) = {sample['dataset_len']} per rank (world size {ctx.world_size}){overlap}"), site_row)
    if len(per_rank) < 2:
        return Judgement(INCONCLUSIVE, f"only {_ranks_text(sorted(per_rank))} iterated the loader", site_row)
    return Judgement(INCONCLUSIVE, (
        "sampler lengths vs dataset length do not settle it: "
        + "; ".join(f"rank {r}: {loader['sampler']} len {loader['sampler_len']} of {loader['dataset_len']}"
                    for r, (loader, _) in sorted(per_rank.items()))), site_row)


def _reads_whole_dataset(loader: dict) -> bool:
    size, drawn = loader.get("dataset_len"), loader.get("sampler_len")
    return size is not None and drawn is not None and size > 0 and drawn >= size


def _is_sharded(loader: dict) -> bool:
    size, drawn = loader.get("dataset_len"), loader.get("sampler_len")
    return size is not None and drawn is not None and 0 < drawn < size


def _overlap_sentence(per_rank: dict) -> str:
    """How many of the indices the other ranks drew in their first epoch rank-lowest drew too."""
    ranks = sorted(per_rank)
    base = set(per_rank[ranks[0]][1].indices)
    shared = total = 0
    for rank in ranks[1:]:
        drawn = per_rank[rank][1].indices
        total += len(drawn)
        shared += sum(1 for i in drawn if i in base)
    if not base or not total:
        return ""
    return (f"; in their first epoch {_ranks_text(ranks[1:])} drew {total} indices, {shared} "
            f"({_pct(shared, total)}) of them also drawn by rank {ranks[0]}")


# -- DDP002: the same order every epoch -----------------------------------------------------------
def judge_ddp002(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    """Confirmed when a shuffling sampler with an epoch starts every epoch at the same epoch value
    and hands out the same order again."""
    observations = []
    for rank in ctx.ranks:
        for loader_id, loader in rank.loaders.items():
            if not loader.get("shuffle") or not _sampler_has_epoch(rank, loader_id):
                continue
            if row is None and loader_id not in rank.training_loaders:
                continue  # the order of an evaluation pass does not matter
            epochs = [e for e in rank.epochs if e.loader == loader_id and e.batches]
            if epochs:
                observations.append((rank.rank, loader, epochs))
    if not observations:
        return Judgement(INCONCLUSIVE, "no shuffling sampler with an epoch (DistributedSampler) was iterated")
    repeated = [(r, loader, e) for r, loader, e in observations if len(e) >= 2]
    if not repeated:
        return Judgement(INCONCLUSIVE, "each shuffling DistributedSampler was iterated only once within the step "
                         "budget: raise --max-steps or lower --epoch-steps to reach an epoch boundary")
    stuck = [(r, loader, e) for r, loader, e in repeated if _epoch_never_changes(e)]
    if stuck and len(stuck) == len(repeated):
        stuck_rank, loader, epochs = stuck[0]
        first = epochs[0].indices[:4]
        same_order = all(_same_order(eps[0], e) for _, _, eps in stuck for e in eps[1:])
        order = (f"each rank drew the same order every epoch (rank {stuck_rank} started each with {first})"
                 if same_order else "yet the order differed between epochs (a sampler that reseeds itself?)")
        return Judgement(CONFIRMED if same_order else INCONCLUSIVE, (
            f"{loader['sampler']}.epoch was {epochs[0].sampler_epoch} at all {len(epochs)} epoch starts on "
            f"{_ranks_text(sorted({r for r, _, _ in stuck}))}: {order}"))
    moving_rank, loader, epochs = next((o for o in repeated if not _epoch_never_changes(o[2])), repeated[0])
    values = [e.sampler_epoch for e in epochs]
    reordered = sum(1 for a, b in zip(epochs, epochs[1:]) if not _same_order(a, b))
    return Judgement(REFUTED, (
        f"{loader['sampler']}.epoch was {values} at the {len(epochs)} epoch starts on rank {moving_rank}, and "
        f"{reordered} of {len(epochs) - 1} epoch changes drew a new order"))


def _sampler_has_epoch(rank: RankSummary, loader_id: int) -> bool:
    return any(e.loader == loader_id and e.sampler_epoch is not None for e in rank.epochs)


def _epoch_never_changes(epochs: list) -> bool:
    return len({e.sampler_epoch for e in epochs}) == 1


def _same_order(a, b) -> bool:
    n = min(len(a.indices), len(b.indices))
    return n > 0 and a.indices[:n] == b.indices[:n]


# -- DDP003: nn.DataParallel ---------------------------------------------------------------------
def judge_ddp003(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    built = [r for r in ctx.ranks if r.data_parallel]
    if built:
        record = built[0].data_parallel[0]
        devices = record.get("device_ids") or []
        device_text = f"device_ids {devices}" if devices else "no GPU (device_ids empty: it only calls the module)"
        synced = [r.rank for r in built if r.ddp]
        sync_text = ("" if synced else "; no DistributedDataParallel was built, so the ranks never exchange "
                     "gradients")
        gpu = _gpu_skew_sentence(ctx.nvml)
        return Judgement(CONFIRMED, (
            f"nn.DataParallel built on {_ranks_text([r.rank for r in built])} of {len(ctx.ranks)} with "
            f"{device_text}, parameters on {_parameter_devices(ctx, built[0], record)}"
            f"{sync_text}{gpu}"),
            (record.get("site") or {}).get("line"))
    trained = [r for r in ctx.ranks if r.steps]
    if trained and len(trained) == len(ctx.ranks):
        wrapped = [r.rank for r in trained if r.ddp]
        ddp_text = f"; {_ranks_text(wrapped)} wrapped the model in DistributedDataParallel" if wrapped else ""
        return Judgement(REFUTED, (
            f"no nn.DataParallel was built before or during the {min(r.steps for r in trained)} steps run on each "
            f"of the {len(trained)} ranks{ddp_text}"))
    return Judgement(INCONCLUSIVE, "no nn.DataParallel was built, but not every rank reached a training step")


def _parameter_devices(ctx: RunContext, rank: RankSummary, record: dict) -> str:
    if ctx.emulated and rank.logical_devices():
        return f"{rank.logical_devices()[0]} (logical)"  # really on the CPU, by the rehearsal
    return ", ".join(record.get("param_devices") or []) or "no device"


def _gpu_skew_sentence(nvml: Optional[dict]) -> str:
    if not nvml or not nvml.get("devices"):
        return ""
    parts = [f"GPU {d['index']} {d['util_mean']:.0f} % busy, {d['mem_max_mib']:.0f} MiB" for d in nvml["devices"]]
    return "; NVML: " + ", ".join(parts)


# -- DDP004: rank 0 works while the others wait ---------------------------------------------------
def judge_ddp004(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    by_rank = {r.rank: r for r in ctx.ranks}
    if ctx.world_size < 2 or 0 not in by_rank or len(by_rank) < 2:
        return Judgement(INCONCLUSIVE, "needs rank 0 and at least one other rank with telemetry")
    waits = {r: by_rank[r].wait_before_first_batch(ctx.stopped_at) for r in by_rank}
    lead = {r: by_rank[r].time_to_first_batch(ctx.stopped_at) or 0.0 for r in by_rank}
    rank0_wait = waits[0][0]
    others = sorted(r for r in by_rank if r != 0)
    waiting = [r for r in others if waits[r][0] >= DDP004_WAIT_S]
    ops = "/".join(sorted({op for r in others for op in waits[r][1]})) or "collectives"
    numbers = _waits_text({r: (waits[r][0], lead[r]) for r in others})
    rank0_text = f"rank 0 spent {rank0_wait:.2f} s of its {lead[0]:.2f} s to the first batch in collectives"
    if waiting and len(waiting) == len(others) and rank0_wait <= 0.5 * min(waits[r][0] for r in waiting):
        return Judgement(CONFIRMED, (
            f"before the first batch the other ranks sat blocked in {ops} ({numbers}) while rank 0 worked: "
            f"{rank0_text}"))
    if all(waits[r][0] < DDP004_WAIT_S for r in others):
        return Judgement(REFUTED, (
            f"no rank waited long for rank 0 before the first batch ({numbers}); {rank0_text}"))
    return Judgement(INCONCLUSIVE, f"waits in collectives before the first batch: {numbers}; {rank0_text}")


def _waits_text(waits: dict) -> str:
    """rank -> (seconds waited, seconds to the first batch), per rank or as a range for many."""
    if len(waits) <= 3:
        return ", ".join(f"rank {r}: {w:.2f} s, {_pct(w, lead)} of its time to the first batch"
                         for r, (w, lead) in sorted(waits.items()))
    seconds = [w for w, _ in waits.values()]
    shares = [100.0 * w / lead for w, lead in waits.values() if lead > 0]
    share_text = f", {min(shares):.0f}-{max(shares):.0f} % of their time to the first batch" if shares else ""
    return f"{_ranks_text(list(waits))}: {min(seconds):.2f}-{max(seconds):.2f} s{share_text}"


# -- DDP005: every rank on the same GPU ------------------------------------------------------------
def judge_ddp005(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    per_host: dict = {}
    for rank in ctx.ranks:
        cuda = [d for d in rank.devices() if d.startswith("cuda")]
        if cuda:
            per_host.setdefault(rank.host, {})[rank.rank] = cuda[0]
    if not per_host:
        return None if row is None else Judgement(INCONCLUSIVE, "no rank computed on a GPU" + _rehearse_hint(ctx))
    verb = "asked for" if ctx.emulated else "computed on"
    for host, devices in per_host.items():
        if len(devices) >= 2 and len(set(devices.values())) == 1:
            device = next(iter(devices.values()))
            where = _first_request_line(ctx, device) if ctx.emulated else ""
            return Judgement(CONFIRMED, (
                f"all {len(devices)} ranks on host {host} {verb} {device} ({_ranks_text(sorted(devices))}){where}"
                f"{_LOGICAL_NOTE if ctx.emulated else ''}"))
    text = "; ".join(", ".join(f"rank {r} on {d}" for r, d in sorted(devs.items())) for devs in per_host.values())
    return Judgement(REFUTED, f"each rank on its own GPU: {text}{_LOGICAL_NOTE if ctx.emulated else ''}")


_LOGICAL_NOTE = " (logical GPUs of the CPU rehearsal: on a machine with GPUs these are the devices it would use)"


def _rehearse_hint(ctx: RunContext) -> str:
    return "" if ctx.emulated else " (on a machine without GPUs, `ddplint verify --cpu` rehearses the GPU path)"


def _first_request_line(ctx: RunContext, device: str) -> str:
    for rank in ctx.ranks:
        for request in rank.cuda_requests:
            site = request.get("site") or {}
            if request.get("device") == device and site.get("line") and _same_file(site.get("file", ""), ctx.script):
                return f", first as the {request.get('what')} device on line {site['line']}"
    return ""


# -- DDP006: shuffle=True with a sampler -------------------------------------------------------------
def judge_ddp006(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    failed: dict = {}
    for rank in ctx.ranks:
        for error in rank.loader_errors:
            line = (error.get("site") or {}).get("line")
            if "mutually exclusive" in str(error.get("error")) and (row is None or line == row):
                failed.setdefault(line, []).append((rank.rank, error.get("error")))
    if failed:
        line, ranks = next(iter(failed.items()))
        return Judgement(CONFIRMED, (
            f"DataLoader(...) on line {line} raised {ranks[0][1]} on {_ranks_text([r for r, _ in ranks])} at start-up, "
            f"before any batch"), line)
    if row is None:
        return None
    built = [r.rank for r in ctx.ranks if any((loader.get("site") or {}).get("line") == row for loader in r.loaders.values())]
    if built and len(built) == len(ctx.ranks):
        return Judgement(REFUTED, f"the DataLoader on line {row} was built without an error on {_ranks_text(built)}")
    return Judgement(INCONCLUSIVE, f"the DataLoader on line {row} was not built on every rank")


# -- DDP007: a collective reached by some ranks only -------------------------------------------------
def judge_ddp007(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    """The ranks' sequences of Python-level collectives (op, size, line) are compared; at the
    timeout, each rank's stack says where it stood."""
    # A rank that failed on its own (an exception of the script, not a broken collective) stopped
    # issuing collectives for that reason: its shorter sequence says nothing about DDP007.
    ranks = [r for r in ctx.ranks if r.init_at is not None and not _failed_on_its_own(r)]
    if ctx.world_size < 2 or len(ranks) < 2:
        return None if row is None else Judgement(INCONCLUSIVE, "needs at least two ranks in one process group "
                                                  "that did not fail on their own")
    hang = _hang_sentence(ctx, ranks)
    divergence = _divergence_sentence(ranks)
    if ctx.timed_out and (divergence or hang):
        # At a timeout a rank blocked alone may only be early (the others still preprocessing, as in
        # DDP004): it is this finding only when the collective it waits in is the finding's.
        text = "; ".join(part for part in (divergence, hang) if part)
        if row is None:
            return None
        blocked_here = any(c is not None and (c.line == row or row in c.lines)
                           for c in (r.open_collective() for r in ranks))
        return Judgement(CONFIRMED if blocked_here else INCONCLUSIVE, text, row)
    if divergence:
        return Judgement(CONFIRMED, divergence, _divergent_line(ranks, row))
    if row is None:
        return None
    count = len(ranks[0].collectives)
    reached = [r.rank for r in ranks if any(row in c.lines or c.line == row for c in r.collectives)]
    if not reached:
        return Judgement(INCONCLUSIVE, (
            f"no collective was issued from line {row} within the step budget; the ranks' {count} collectives "
            f"matched one for one"))
    return Judgement(REFUTED, (
        f"every rank issued the same sequence of {count} collectives (op and size, one for one), including the one "
        f"from line {row} ({_ranks_text(reached)} reached it)"))


_COMMUNICATION_ERRORS = re.compile(r"gloo|nccl|connection|timed out|collective|peer", re.IGNORECASE)


def _failed_on_its_own(rank: RankSummary) -> bool:
    if not rank.crashed or rank.end is None:
        return False
    return not _COMMUNICATION_ERRORS.search(str(rank.end.get("error", "")))


def _describe_collective(coll, state: bool = True) -> str:
    size = f" {coll.size}" if coll.size else ""
    line = f" at line {coll.line}" if coll.line else ""
    waiting = " (still waiting at the stop)" if state and coll.duration is None else ""
    return f"{coll.op}{size}{line}{waiting}"


def _divergence_sentence(ranks: list) -> str:
    sequences = {r.rank: [(c.op, tuple(c.size or ())) for c in r.collectives] for r in ranks}
    if len({tuple(seq) for seq in sequences.values()}) == 1:
        return ""
    index = 0
    while all(index < len(seq) for seq in sequences.values()) and \
            len({seq[index] for seq in sequences.values()}) == 1:
        index += 1
    parts = []
    for rank in ranks:
        if index < len(rank.collectives):
            parts.append(f"rank {rank.rank} {_describe_collective(rank.collectives[index])}")
        else:
            parts.append(f"rank {rank.rank} none (it issued {len(rank.collectives)} in all)")
    counts = _count_differences(ranks)
    return (f"the ranks' sequences of collectives diverge at collective #{index + 1}: " + ", ".join(parts)
            + (f"; {counts}" if counts else ""))


def _count_differences(ranks: list) -> str:
    """Per (op, line), how often each rank issued it, where the counts differ."""
    per_key: dict = {}
    for rank in ranks:
        for coll in rank.collectives:
            key = (coll.op, coll.line)
            per_key.setdefault(key, {r.rank: 0 for r in ranks})[rank.rank] += 1
    texts = []
    for (op, line), counts in per_key.items():
        if len(set(counts.values())) > 1:
            where = f" at line {line}" if line else ""
            texts.append(f"{op}{where} issued " + ", ".join(f"{n}x by rank {r}" for r, n in sorted(counts.items())))
    return "; ".join(texts[:3])


def _divergent_line(ranks: list, row: Optional[int]) -> Optional[int]:
    if row is not None:
        return row
    per_key: dict = {}
    for rank in ranks:
        for coll in rank.collectives:
            per_key.setdefault((coll.op, coll.line), {}).setdefault(rank.rank, 0)
            per_key[(coll.op, coll.line)][rank.rank] += 1
    for (_op, line), counts in per_key.items():
        if len(counts) < len(ranks) or len(set(counts.values())) > 1:
            return line
    return None


def _hang_sentence(ctx: RunContext, ranks: list) -> str:
    """At the timeout: some rank blocked in a collective the others are not in."""
    if not ctx.timed_out:
        return ""
    open_ = {r.rank: r.open_collective() for r in ranks}
    blocked = [r for r in ranks if open_[r.rank] is not None]
    if not blocked:
        return ""
    places = {(c.op, c.line) if c is not None else None for c in open_.values()}
    if len(places) == 1 and len(blocked) == len(ranks):
        return ""  # every rank waits in the same collective: stuck, but not on a rank-only call
    where = []
    for rank in ranks:
        coll = open_[rank.rank]
        stack = _stack_place(rank.stack, ctx.script)
        if coll is not None:
            waited = max(ctx.stopped_at - coll.began, 0.0)
            where.append(f"rank {rank.rank} blocked {waited:.1f} s in {_describe_collective(coll, state=False)}"
                         + (f" [stack: {stack}]" if stack else ""))
        else:
            where.append(f"rank {rank.rank} not in any collective" + (f", at {stack}" if stack else ""))
    return "at the timeout " + "; ".join(where)


def _stack_place(stack: str, script: str) -> str:
    """The script's frames of the thread that runs the script, innermost first, from a
    faulthandler dump: 'line 42 in main <- line 80 in <module>'."""
    best: list = []
    frames: list = []
    for raw in stack.splitlines() + [""]:
        line = raw.strip()
        if line.startswith("File "):
            try:
                path = line.split('"')[1]
                number = int(line.split(", line ")[1].split()[0])
                function = line.rsplit(" in ", 1)[1]
            except (IndexError, ValueError):
                continue
            if _same_file(path, script) or os.path.basename(path) == os.path.basename(script):
                frames.append(f"line {number} in {function}")
        else:
            if frames and not best:
                best = frames
            frames = []
    return " <- ".join(best[:4])


# -- DDP008: a checkpoint restored onto another rank's GPU ---------------------------------------------
def judge_ddp008(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    loads = [(rank.rank, load) for rank in ctx.ranks for load in rank.loads
             if row is None or (load.get("site") or {}).get("line") == row]
    if not loads:
        return None if row is None else Judgement(INCONCLUSIVE, f"torch.load on line {row} did not run on any rank")
    foreign = [(r, entry) for r, entry in loads
               if any(d.startswith("cuda") and d != entry.get("own") for d in entry.get("devices") or [])]
    note = _LOGICAL_NOTE if ctx.emulated else ""
    if foreign:
        rank, load = foreign[0]
        others = sorted({r for r, _ in foreign})
        line = (load.get("site") or {}).get("line")
        return Judgement(CONFIRMED, (
            f"torch.load on line {line} restored the tensors onto {', '.join(load['devices'])} on "
            f"{_ranks_text(others)}, whose own GPU is {load.get('own')}{note}"), line)
    unknown = [(r, entry) for r, entry in loads if entry.get("origin") == "unknown"]
    if unknown:
        rank, load = unknown[0]
        line = (load.get("site") or {}).get("line")
        return Judgement(INCONCLUSIVE, (
            f"torch.load on line {line} read {load.get('file') or 'a file'} on {_ranks_text(sorted({r for r, _ in unknown}))}, "
            f"saved before this run by a process verify did not watch (or changed since): its tensors say cpu, as a CPU "
            f"rehearsal writes them, so which GPU they came from is unknown; a file saved in a rehearsal is remembered "
            f"in the project's cache folder for the next one"), line)
    on_gpu = [(r, entry) for r, entry in loads if any(d.startswith("cuda") for d in entry.get("devices") or [])]
    if not on_gpu and not ctx.emulated:
        return Judgement(INCONCLUSIVE, "every torch.load restored CPU tensors: the run had no GPU"
                         + _rehearse_hint(ctx))
    ranks = sorted({r for r, _ in loads})
    return Judgement(REFUTED, f"torch.load put the tensors on each rank's own device or the CPU ({_ranks_text(ranks)}: "
                     + "; ".join(f"rank {r}: {', '.join(entry.get('devices') or ['(decided by map_location)'])}"
                                 for r, entry in loads[:4]) + ")" + note)


# -- DDP009: an IterableDataset every rank reads whole ---------------------------------------------
DDP009_CONFIRM_SHARE = 0.5
DDP009_REFUTE_SHARE = 0.05
MIN_ITEMS = 8


def judge_ddp009(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    per_rank = _first_digests(ctx, row)
    if row is not None and len(per_rank) < 2:
        per_rank = _first_digests(ctx, None)  # the finding may sit on the dataset, not the loader
    if len(per_rank) < 2 or ctx.world_size < 2:
        return None if row is None else Judgement(INCONCLUSIVE, "no IterableDataset loader was iterated on two ranks")
    return _judge_digests(per_rank)


def _first_digests(ctx: RunContext, row: Optional[int]) -> dict:
    """rank -> the item digests of its first epoch over an IterableDataset loader (the one built on
    `row` when given)."""
    per_rank = {}
    for rank in ctx.ranks:
        for loader_id, loader in rank.loaders.items():
            if not loader.get("iterable"):
                continue
            line = (loader.get("site") or {}).get("line")
            if row is not None and line != row:
                continue
            first = next((e for e in rank.epochs if e.loader == loader_id and e.digests), None)
            if first is not None:
                per_rank[rank.rank] = first.digests
                break
    return per_rank


def _judge_digests(per_rank: dict) -> Judgement:
    ranks = sorted(per_rank)
    base = set(per_rank[ranks[0]])
    drawn = sum(len(per_rank[r]) for r in ranks[1:])
    shared = sum(1 for r in ranks[1:] for d in per_rank[r] if d in base)
    if drawn < MIN_ITEMS:
        return Judgement(INCONCLUSIVE, f"too few items to compare ({drawn})")
    sentence = (f"in their first epoch {_ranks_text(ranks[1:])} received {drawn} items, {shared} "
                f"({_pct(shared, drawn)}) of them identical in content to items rank {ranks[0]} received "
                f"(compared by a digest of each item)")
    if shared >= DDP009_CONFIRM_SHARE * drawn:
        return Judgement(CONFIRMED, sentence + ": every rank reads the same stream")
    if shared <= DDP009_REFUTE_SHARE * drawn:
        return Judgement(REFUTED, sentence + ": the stream is split between the ranks")
    return Judgement(INCONCLUSIVE, sentence)


# -- DDP010: rank 0 evaluates while the others wait ----------------------------------------------------
DDP010_WAIT_SHARE = 0.5
DDP010_REFUTE_SHARE = 0.2
DDP010_FLOOR_S = 0.01
# A barrier releases every rank at once, but each process reads its own clock after the release:
# a rank whose collective ended this close before rank 0 joined it was still held by the evaluation.
DDP010_RELEASE_SLACK_S = 0.02


def judge_ddp010(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    by_rank = {r.rank: r for r in ctx.ranks}
    if 0 not in by_rank or len(by_rank) < 2 or ctx.world_size < 2:
        return None if row is None else Judgement(INCONCLUSIVE, "needs rank 0 and at least one other rank")
    rank0 = by_rank[0]
    evaluation = [e for e in rank0.epochs if e.batches and e.loader not in rank0.training_loaders]
    if not evaluation:
        return None if row is None else Judgement(
            INCONCLUSIVE, "rank 0 ran no evaluation pass within the step budget (raise --max-steps)")
    eval_sites = {(rank0.loaders.get(e.loader) or {}).get("site", {}).get("line") for e in evaluation}
    others = [r for r in by_rank.values() if r.rank != 0]
    sharded = [r.rank for r in others
               if any((loader.get("site") or {}).get("line") in eval_sites and any(e.loader == i and e.batches
                                                                               for e in r.epochs)
                      for i, loader in r.loaders.items())]
    if sharded and len(sharded) == len(others):
        return Judgement(REFUTED, f"every rank ran the evaluation pass (loader on line "
                         f"{', '.join(str(s) for s in sorted(x for x in eval_sites if x))}), not rank 0 alone")
    eval_s = 0.0
    waited = {r.rank: 0.0 for r in others}
    held_to_the_end = {r.rank: 0 for r in others}  # evaluation passes whose end released the rank
    ops: set = set()
    for epoch in evaluation:
        start = epoch.began or 0.0
        after = [c.began for c in rank0.collectives if c.began >= start]
        end = min(after) if after else (epoch.last_batch_at or start)
        eval_s += max(end - start, 0.0)
        for rank in others:
            released_here = False
            for coll in rank.collectives:
                finish = coll.began + (coll.duration if coll.duration is not None else ctx.stopped_at - coll.began)
                overlap = min(finish, end) - max(coll.began, start)
                if overlap > 0:
                    waited[rank.rank] += overlap
                    ops.add(coll.op)
                    released_here = released_here or finish >= end - DDP010_RELEASE_SLACK_S
            held_to_the_end[rank.rank] += released_here
    least = min(waited.values())
    numbers = (f"rank 0 spent {eval_s:.2f} s in {len(evaluation)} evaluation pass(es) alone while "
               + ", ".join(f"rank {r} waited {w:.2f} s" for r, w in sorted(waited.items()))
               + (f" in {'/'.join(sorted(ops))}" if ops else " in collectives"))
    # A rank still finishing its own step when rank 0 began evaluating waits for less than the whole
    # evaluation; what shows that it waited *for* it is that rank 0's arrival released it, every pass.
    released_by_rank0 = all(count >= len(evaluation) for count in held_to_the_end.values())
    if eval_s >= DDP010_FLOOR_S and (least >= DDP010_WAIT_SHARE * eval_s
                                     or (released_by_rank0 and least >= DDP010_REFUTE_SHARE * eval_s)):
        return Judgement(CONFIRMED, numbers + f" ({_pct(least, eval_s)} of the evaluation time at least)")
    if least < DDP010_REFUTE_SHARE * eval_s:
        return Judgement(REFUTED, numbers + ": the other ranks did not wait for it")
    return Judgement(INCONCLUSIVE, numbers)


# -- DDP011: samplers seeded per rank ----------------------------------------------------------------
def judge_ddp011(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    per_rank = {}
    for rank in ctx.ranks:
        for loader_id, loader in rank.loaders.items():
            if loader.get("sampler") != "DistributedSampler" or loader.get("seed") is None:
                continue
            first = next((e for e in rank.epochs if e.loader == loader_id and e.batches), None)
            # The finding sits on the DistributedSampler(...) line, not the loader's: any sampler of
            # the kind will do for it; without one, only a training loader's counts.
            if first is not None and (row is not None or loader_id in rank.training_loaders):
                per_rank[rank.rank] = (loader, first)
                break
    if len(per_rank) < 2 or ctx.world_size < 2:
        return None if row is None else Judgement(INCONCLUSIVE, "no DistributedSampler was iterated on two ranks")
    seeds = {r: loader["seed"] for r, (loader, _) in per_rank.items()}
    seed_text = ", ".join(f"seed {s} on rank {r}" for r, s in sorted(seeds.items()))
    overlap = _overlap_sentence(per_rank)
    shuffled = all(loader.get("shuffle") for loader, _ in per_rank.values())
    if len(set(seeds.values())) > 1 and shuffled:
        shared = _shared_indices(per_rank)
        status = CONFIRMED if shared > 0 else INCONCLUSIVE
        return Judgement(status, f"DistributedSampler with {seed_text}: the ranks shuffle differently, so their "
                         f"shards overlap and some samples are never read{overlap}")
    return Judgement(REFUTED, f"DistributedSampler with {seed_text}{'' if shuffled else ' (no shuffling)'}: "
                     f"one permutation split between the ranks{overlap}")


def _shared_indices(per_rank: dict) -> int:
    ranks = sorted(per_rank)
    base = set(per_rank[ranks[0]][1].indices)
    return sum(1 for r in ranks[1:] for i in per_rank[r][1].indices if i in base)


# -- DDP012: steps that wait for data ----------------------------------------------------------------
DDP012_CONFIRM_SHARE = 0.30
DDP012_REFUTE_SHARE = 0.10


def judge_ddp012(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    medians = {r.rank: m for r in ctx.ranks if (m := r.step_medians()) and m["steps_timed"] >= MIN_TIMED_STEPS}
    if not medians:
        return None if row is None else Judgement(INCONCLUSIVE, f"fewer than {MIN_TIMED_STEPS} timed steps per rank")
    shares = {r: m["data_wait_s"] / m["step_s"] if m["step_s"] > 0 else 0.0 for r, m in medians.items()}
    text = ", ".join(f"rank {r}: {1000 * medians[r]['data_wait_s']:.1f} of {1000 * medians[r]['step_s']:.1f} ms "
                     f"({_pct(medians[r]['data_wait_s'], medians[r]['step_s'])})" for r in sorted(medians))
    sentence = f"share of each step spent waiting for the next batch (medians): {text}"
    if min(shares.values()) >= DDP012_CONFIRM_SHARE:
        return Judgement(CONFIRMED, sentence)
    if row is None:
        return None
    on_gpu = any(d.startswith("cuda") for r in ctx.ranks for d in r.devices()) and not ctx.emulated
    if max(shares.values()) <= DDP012_REFUTE_SHARE:
        if on_gpu:
            return Judgement(REFUTED, sentence)
        return Judgement(INCONCLUSIVE, sentence + "; measured with CPU compute, slower than a GPU's, so on GPUs the "
                         "data's share would be larger: only a GPU run can refute this")
    return Judgement(INCONCLUSIVE, sentence)


# -- DDP013: every rank downloads the dataset into one folder ------------------------------------------
def judge_ddp013(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    """Confirmed when two or more ranks opened the same files for writing from the dataset's line
    before their first batch (their downloads and extractions write over each other).

    Judged for a static finding only: ranks writing the same file for another reason (a log, a
    cache) is not this rule's shape."""
    if row is None:
        return None
    if ctx.world_size < 2 or len(ctx.ranks) < 2:
        return Judgement(INCONCLUSIVE, "needs at least two ranks with telemetry")
    per_rank = {r.rank: [w for w in r.writes if row in _write_lines(ctx, w)] for r in ctx.ranks}
    writers = {r: writes for r, writes in per_rank.items() if writes}
    if not writers:
        return Judgement(INCONCLUSIVE, (
            f"no rank wrote a file from line {row} before its first batch: the dataset was already in place, "
            "so nothing was downloaded and the race cannot show in this run (not measured; run it with an "
            "empty data folder to measure it)"))
    paths = {r: {w["path"] for w in writes} for r, writes in writers.items()}
    shared = set.intersection(*paths.values()) if len(paths) >= 2 else set()
    if shared:
        example = sorted(shared)[0]
        overlap = _write_windows_overlap(writers)
        timing = ("their writes overlapped in time" if overlap
                  else "one after the other in this run, with nothing making them wait for each other")
        return Judgement(CONFIRMED, (
            f"{_ranks_text(sorted(writers))} each opened the same {len(shared)} file(s) for writing from line "
            f"{row} before their first batch (e.g. {example}): {timing}"), row)
    others = sorted(r for r in per_rank if r not in writers)
    if len(writers) == 1:
        (only, writes), = writers.items()
        return Judgement(REFUTED, (
            f"only rank {only} wrote files from line {row} ({len(writes)} file(s), e.g. {writes[0]['path']}); "
            f"{_ranks_text(others)} found them in place"), row)
    return Judgement(INCONCLUSIVE, (
        f"{_ranks_text(sorted(writers))} wrote files from line {row}, but no file was written by more than one "
        "rank (per-rank folders?)"), row)


def _write_lines(ctx: RunContext, write: dict) -> tuple:
    site = write.get("site") or {}
    if not _same_file(site.get("file", ""), ctx.script):
        return ()
    return tuple(site.get("lines") or ()) or ((site["line"],) if site.get("line") else ())


def _write_windows_overlap(writers: dict) -> bool:
    windows = sorted((min(w["t"] for w in writes), max(w["t"] for w in writes)) for writes in writers.values())
    return any(later[0] <= earlier[1] for earlier, later in zip(windows, windows[1:]))


# -- DDP014: a metric of one rank's shard ---------------------------------------------------------------
REDUCING_OPS = frozenset({"all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object", "reduce",
                          "gather", "gather_object", "reduce_scatter", "reduce_scatter_tensor",
                          "all_reduce_coalesced", "all_gather_coalesced"})


def judge_ddp014(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    """Which evaluation passes ran, whether each rank saw only its shard, and whether any reduction
    across ranks followed them. The reported number itself is not visible to the probe: a
    reduction after the pass may or may not be of the counts, so that stays inconclusive.
    Judged for a static finding only."""
    if row is None:
        return None
    if ctx.world_size < 2:
        return Judgement(INCONCLUSIVE, "no process group of more than one rank was formed")
    passes = {r.rank: _evaluation_passes(r) for r in ctx.ranks}
    if not all(passes.values()):
        return Judgement(INCONCLUSIVE, "not every rank ran an evaluation pass within the step budget, so nothing was "
                         "measured (raise --max-steps or lower --epoch-steps to reach the evaluation)")
    loaders = [loader for rank in ctx.ranks for loader, _ in passes[rank.rank]]
    if all(_reads_whole_dataset(loader) for loader in loaders):
        sample = loaders[0]
        return Judgement(REFUTED, (
            f"every rank evaluated the whole set (len(sampler) = {sample['sampler_len']} = len(dataset) on "
            f"{_ranks_text(sorted(passes))}): the counts are the whole set's on each rank"))
    if not all(_is_sharded(loader) for loader in loaders):
        return Judgement(INCONCLUSIVE, "the evaluation loaders' lengths do not say whether each rank saw a shard")
    sample = loaders[0]
    shard = (f"each rank evaluated its shard only (len(sampler) = {sample['sampler_len']} of len(dataset) = "
             f"{sample['dataset_len']}, {_ranks_text(sorted(passes))})")
    reductions = {r.rank: _reductions_after(r, passes[r.rank]) for r in ctx.ranks}
    if not any(reductions.values()):
        return Judgement(CONFIRMED, (
            f"{shard}, and no rank issued an all_reduce, all_gather, reduce or gather between the start of the "
            f"evaluation and the next training batch: whatever was reported came from one shard's counts"))
    lines = sorted({c.line for calls in reductions.values() for c in calls if c.line})
    ops = "/".join(sorted({c.op for calls in reductions.values() for c in calls}))
    where = f" on line {', '.join(map(str, lines))}" if lines else ""
    return Judgement(INCONCLUSIVE, (
        f"{shard}; after it the ranks issued {ops}{where}: whether that reduces the reported counts is not "
        "measured"))


def _evaluation_passes(rank: RankSummary) -> list:
    """(loader record, epoch) for each pass over a loader whose batches no backward followed."""
    return [(rank.loaders[e.loader], e) for e in rank.epochs
            if e.batches and e.loader in rank.loaders and e.loader not in rank.training_loaders]


def _reductions_after(rank: RankSummary, passes: list) -> list:
    """Reducing collectives from the start of an evaluation pass to the next training batch."""
    found = []
    for _, epoch in passes:
        start = epoch.began or 0.0
        later = [b["t"] for b in rank.batches if b["t"] > (epoch.last_batch_at or start)
                 and b.get("loader") in rank.training_loaders]
        end = min(later) if later else float("inf")
        found += [c for c in rank.collectives if c.op in REDUCING_OPS and start <= c.began < end]
    return found


# -- DDP015: an all-reduce on every micro-batch ------------------------------------------------------------
def judge_ddp015(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    """Per optimizer step: the backward passes that fed it, and how many of them all-reduced gradient
    buckets (DDP's communication hook). Accumulation with no_sync all-reduces once per step."""
    windows = {r.rank: w for r in ctx.ranks if (w := _measured_windows(r)) is not None}
    if not windows:
        return None if row is None else Judgement(INCONCLUSIVE, _why_no_windows(ctx))
    accumulating = {r: [(b, s) for b, s in w if b >= 2] for r, w in windows.items()}
    accumulating = {r: w for r, w in accumulating.items() if w}
    if not accumulating:
        steps = sum(len(w) for w in windows.values())
        return None if row is None else Judgement(INCONCLUSIVE, (
            f"each of the {steps} optimizer steps measured followed a single backward pass: no accumulation "
            "within this run (its arguments may set the accumulation to 1), so nothing to compare"))
    every = all(s == b for w in accumulating.values() for b, s in w)
    once = all(s <= 1 for w in accumulating.values() for _, s in w)
    rank, sample = min(accumulating.items())
    backward, synced = sample[0]
    counts = (f"on {_ranks_text(sorted(accumulating))}, {sum(len(w) for w in accumulating.values())} optimizer "
              f"steps fed by several backward passes (rank {rank}'s first: {backward} backward passes, {synced} of "
              "them all-reduced the gradients)")
    if every and (row is not None or len(accumulating[rank]) >= 2):
        return Judgement(CONFIRMED, counts + f": every micro-batch's backward all-reduced, {backward} all-reduces "
                         "for one update")
    if row is None:
        return None
    if once:
        return Judgement(REFUTED, counts + ": the micro-batches that do not step skip the all-reduce")
    return Judgement(INCONCLUSIVE, counts)


def _why_no_windows(ctx: RunContext) -> str:
    if not any("bw" in b for r in ctx.ranks for b in r.buckets):
        return ("no DistributedDataParallel model all-reduced a gradient bucket through verify's communication "
                "hook on any rank: not measured")
    backward = max(r.end.get("bw", 0) if r.end else 0 for r in ctx.ranks)
    return (f"no optimizer stepped within the run ({backward} backward passes at most on a rank): each pass over a "
            "loader is cut after --epoch-steps batches, which may be fewer than the accumulation (raise "
            "--epoch-steps and --max-steps to measure it), or the optimizer is not a torch.optim.Optimizer, "
            "whose steps are not seen")


def _measured_windows(rank: RankSummary) -> Optional[list]:
    """The rank's step windows, or None when it has no bucket all-reduce or no optimizer step to
    measure with."""
    if not any("bw" in b for b in rank.buckets) or not rank.optimizer_steps:
        return None
    return _step_windows(rank)


def _step_windows(rank: RankSummary) -> list:
    """[(backward passes, backward passes that all-reduced a gradient bucket)] per optimizer step
    that followed at least one backward pass."""
    synced = {b["bw"] for b in rank.buckets if "bw" in b}
    windows, previous = [], 0
    for step in rank.optimizer_steps:
        current = int(step.get("bw", 0))
        if current > previous:
            windows.append((current - previous, sum(1 for bw in synced if previous < bw <= current)))
        previous = current
    return windows


# -- DDP016: replicas that drift apart ---------------------------------------------------------------------
def judge_ddp016(ctx: RunContext, row: Optional[int] = None) -> Optional[Judgement]:
    """Confirmed when, after the same optimizer step, a DDP model's parameters differ between ranks
    (DDP broadcasts them at construction and keeps them equal while every update is all-reduced)."""
    by_rank = {r.rank: {s["n"]: s["params"] for s in r.optimizer_steps if s.get("params")} for r in ctx.ranks}
    by_rank = {r: steps for r, steps in by_rank.items() if steps}
    if ctx.world_size < 2 or len(by_rank) < 2:
        return None if row is None else Judgement(INCONCLUSIVE, (
            "no two ranks stepped an optimizer with a DistributedDataParallel model: the parameters were not compared "
            "(not measured)"))
    base_rank = min(by_rank)
    compared, first_drift = 0, None
    for n in sorted(by_rank[base_rank]):
        for other in sorted(by_rank):
            if other == base_rank or n not in by_rank[other]:
                continue
            for model, (mine, theirs) in enumerate(zip(by_rank[base_rank][n], by_rank[other][n])):
                if len(mine) != len(theirs):
                    continue
                compared += 1
                differing = sum(1 for a, b in zip(mine, theirs) if a != b and not (math.isnan(a) and math.isnan(b)))
                if differing and first_drift is None:
                    first_drift = (n, other, model, differing, len(mine))
    if not compared:
        return None if row is None else Judgement(INCONCLUSIVE, "no optimizer step was fingerprinted on two ranks "
                                                  "(not measured)")
    unsynced = _unsynced_backward_text(ctx)
    if first_drift is not None:
        n, other, model, differing, total = first_drift
        which = "the DDP model" if model == 0 else f"DDP model {model + 1}"
        return Judgement(CONFIRMED, (
            f"after optimizer step {n}, {differing} of {total} parameters of {which} differ between rank "
            f"{base_rank} and rank {other} (sum of each parameter compared): the replicas drifted apart{unsynced}"))
    if row is None:
        return None
    if unsynced:
        return Judgement(INCONCLUSIVE, (
            f"the parameters stayed equal on every rank over {compared} comparison(s){unsynced}: the ranks may "
            "have trained on the same data"))
    return Judgement(REFUTED, f"the DDP model's parameters were equal on every rank after each of the first "
                     f"optimizer steps ({compared} comparison(s)), and its gradients were all-reduced")


def _unsynced_backward_text(ctx: RunContext) -> str:
    """How many optimizer steps on each rank followed backward passes none of which all-reduced."""
    parts = []
    for rank in ctx.ranks:
        if not rank.optimizer_steps or not any(record.get("timed_buckets") for record in rank.ddp):
            continue  # without verify's hook on the model, bucket all-reduces are not seen
        windows = _step_windows(rank)
        bare = sum(1 for _, synced in windows if not synced)
        if bare:
            parts.append(f"rank {rank.rank}: {bare} of {len(windows)}")
    return ("; optimizer steps whose backward passes all-reduced no gradient: " + ", ".join(parts)) if parts else ""


# -- DDP100: rank imbalance nobody predicted ---------------------------------------------------------
def judge_imbalance(ctx: RunContext) -> Optional[Judgement]:
    """Confirmed when one rank's steps are dominated by waiting for data while the others wait for
    it in collectives, or when collective waits differ that much between ranks."""
    medians = {r.rank: m for r in ctx.ranks if (m := r.step_medians()) and m["steps_timed"] >= MIN_TIMED_STEPS}
    if len(medians) < 2:
        return None
    slow_data = _outlier(medians, "data_wait_s")
    blocked = _outlier(medians, "collective_wait_s")
    if slow_data is None and blocked is None:
        return None
    parts = []
    if slow_data is not None:
        m, others = medians[slow_data], [medians[r]["data_wait_s"] for r in medians if r != slow_data]
        parts.append(f"rank {slow_data} waits {1000 * m['data_wait_s']:.1f} ms per step for data "
                     f"({_pct(m['data_wait_s'], m['step_s'])} of its {1000 * m['step_s']:.1f} ms steps) against "
                     f"{1000 * max(others):.1f} ms at most on the other ranks")
    if blocked is not None:
        m, others = medians[blocked], [medians[r]["collective_wait_s"] for r in medians if r != blocked]
        parts.append(f"rank {blocked} spends {1000 * m['collective_wait_s']:.1f} ms per step blocked in "
                     f"collectives ({_pct(m['collective_wait_s'], m['step_s'])} of its steps) against "
                     f"{1000 * min(others):.1f} ms on the least blocked rank")
    return Judgement(CONFIRMED, "; ".join(parts) + " (medians over the timed steps)")


def _outlier(medians: dict, key: str) -> Optional[int]:
    worst = max(medians, key=lambda r: medians[r][key])
    value, step = medians[worst][key], medians[worst]["step_s"]
    rest = [medians[r][key] for r in medians if r != worst]
    baseline = min(rest) if key == "collective_wait_s" else max(rest)
    if value >= IMBALANCE_FLOOR_S and value >= IMBALANCE_SHARE * step and value - baseline >= IMBALANCE_FLOOR_S \
            and value >= IMBALANCE_RATIO * baseline:
        return worst
    return None


JUDGES: dict[str, Callable[[RunContext, Optional[int]], Optional[Judgement]]] = {
    "DDP001": judge_ddp001,
    "DDP002": judge_ddp002,
    "DDP003": judge_ddp003,
    "DDP004": judge_ddp004,
    "DDP005": judge_ddp005,
    "DDP006": judge_ddp006,
    "DDP007": judge_ddp007,
    "DDP008": judge_ddp008,
    "DDP009": judge_ddp009,
    "DDP010": judge_ddp010,
    "DDP011": judge_ddp011,
    "DDP012": judge_ddp012,
    "DDP013": judge_ddp013,
    "DDP014": judge_ddp014,
    "DDP015": judge_ddp015,
    "DDP016": judge_ddp016,
}

RUNTIME_MESSAGES = {
    "DDP001": "every rank reads the whole dataset (seen at runtime; the static check did not predict it)",
    "DDP002": "a shuffling DistributedSampler repeats the same order every epoch (seen at runtime)",
    "DDP003": "nn.DataParallel is used (seen at runtime)",
    "DDP004": "the other ranks wait for rank 0's work before training starts (seen at runtime)",
    "DDP005": "several ranks compute on the same GPU (seen at runtime)",
    "DDP006": "a DataLoader given both shuffle=True and a sampler raised at start-up (seen at runtime)",
    "DDP007": "the ranks issue different sequences of collectives (seen at runtime)",
    "DDP008": "torch.load restored tensors onto another rank's GPU (seen at runtime)",
    "DDP009": "the ranks read the same items from an IterableDataset (seen at runtime)",
    "DDP010": "rank 0 evaluates alone while the other ranks wait (seen at runtime)",
    "DDP011": "the ranks' DistributedSamplers use different seeds (seen at runtime)",
    "DDP015": "gradient accumulation all-reduces on every micro-batch (seen at runtime)",
    "DDP016": "the ranks' copies of the DDP model drifted apart (seen at runtime)",
}
# Judged only for a static finding: DDP012 is opt-in, and a slow loader without the rule's
# finding is DDP100's business; DDP013's shared writes and DDP014's missing reduction mean
# something only at the line the static rule points to.
STATIC_ONLY = {"DDP012", "DDP013", "DDP014"}


def judge_run(static: Sequence[Diagnostic], ctx: RunContext) -> list[Verdict]:
    verdicts = [_judge_static(finding, ctx) for finding in static]
    predicted = {finding.code for finding in static}
    for code, judge in JUDGES.items():
        if code in predicted or code in STATIC_ONLY:
            continue
        judgement = judge(ctx, None)
        if judgement is not None and judgement.status == CONFIRMED:
            verdicts.append(_runtime_verdict(code, RUNTIME_MESSAGES[code], judgement, ctx.script))
    imbalance = judge_imbalance(ctx)
    if imbalance is not None:
        verdicts.append(_runtime_verdict(IMBALANCE_CODE, IMBALANCE_MESSAGE, imbalance, ctx.script))
    return verdicts


def _judge_static(finding: Diagnostic, ctx: RunContext) -> Verdict:
    judge = JUDGES.get(finding.code)
    if judge is None:
        return Verdict(finding, INCONCLUSIVE, f"verify has no runtime check for {finding.code}", "static")
    judgement = judge(ctx, finding.location.row)
    if judgement is None:
        judgement = Judgement(INCONCLUSIVE, "the run recorded nothing this check could use")
    return Verdict(finding, judgement.status, judgement.evidence, "static")


def _runtime_verdict(code: str, message: str, judgement: Judgement, script: str) -> Verdict:
    row = judgement.row or 1
    location = Location(row, 1)
    finding = Diagnostic(code, message, script, location, location, severity="error")
    return Verdict(finding, judgement.status, judgement.evidence, "runtime", located=judgement.row is not None)


def _strongest(judgements: list) -> Judgement:
    for status in (CONFIRMED, REFUTED):
        for judgement in judgements:
            if judgement.status == status:
                return judgement
    return judgements[0]
