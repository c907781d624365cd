"""What `ddplint verify` prints: text or JSON, and the Chrome trace for --trace.

JSON: {"script", "world_size", "evidence", "problem", "timed_out", "elapsed_s",
       "findings": [{code, status, message, evidence, location, source}],
       "ranks": [{rank, node_rank, host, pid, status, steps, ...}], "gpus": [...]}
`location` is {filename, row, column} or null for a runtime-only finding with no line.
`problem` is why the run produced no evidence (null when it did).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional, Sequence

from ddplint.verify.ranks import RankSummary
from ddplint.verify.verdicts import Verdict


@dataclass(frozen=True)
class Report:
    script: str
    world_size: int
    verdicts: Sequence[Verdict]
    ranks: Sequence[RankSummary]
    timed_out: bool
    elapsed_s: float
    stopped_at: float
    problem: Optional[str] = None  # set when the run produced no evidence
    problem_detail: str = ""  # e.g. the tail of the crashed rank's output
    gpus: Optional[dict] = None
    emulated_gpus: Optional[int] = None  # verify --cpu: logical GPUs per node presented to the ranks

    @property
    def has_evidence(self) -> bool:
        return self.problem is None


# -- per-rank numbers (shared by text and JSON) ----------------------------------------------------
def rank_row(rank: RankSummary, report: Report) -> dict:
    medians = rank.step_medians() or {}
    waited, per_op = rank.wait_before_first_batch(report.stopped_at)
    lead = rank.time_to_first_batch(report.stopped_at)
    open_coll = rank.open_collective()
    return {
        "rank": rank.rank,
        "node_rank": rank.node_rank,
        "host": rank.host,
        "pid": rank.pid,
        "status": rank.status(report.timed_out),
        "steps": rank.training_steps,
        "batches": rank.steps,
        "backend": rank.backend,
        "time_to_first_batch_s": _round(lead) if rank.first_batch_at is not None else None,
        "collective_wait_before_first_batch_s": _round(waited),
        "collective_wait_before_first_batch_by_op": {op: _round(s) for op, s in sorted(per_op.items())},
        "step_s": _round(medians.get("step_s")),
        "data_wait_s": _round(medians.get("data_wait_s")),
        "compute_s": _round(medians.get("compute_s")),
        "collective_wait_s": _round(medians.get("collective_wait_s")),
        "steps_timed": medians.get("steps_timed", 0),
        "devices": rank.devices(),
        "data_parallel": bool(rank.data_parallel),
        "distributed_data_parallel": bool(rank.ddp),
        "blocked_in": None if open_coll is None else open_coll.op,
        "collectives": len(rank.collectives),
        "loads": [{"line": (load.get("site") or {}).get("line"), "devices": load.get("devices"), "own": load.get("own"),
                   "origin": load.get("origin")}
                  for load in rank.loads],
        "loaders": [_loader_row(record, rank) for record in rank.loaders.values()],
        "error": (rank.end or {}).get("error"),
    }


def _loader_row(record: dict, rank: RankSummary) -> dict:
    epochs = [e for e in rank.epochs if e.loader == record["loader"]]
    return {
        "line": (record.get("site") or {}).get("line"),
        "sampler": record.get("sampler"),
        "sampler_len": record.get("sampler_len"),
        "dataset_len": record.get("dataset_len"),
        "shuffle": record.get("shuffle"),
        "epochs_started": len(epochs),
        "sampler_epochs": [e.sampler_epoch for e in epochs],
        "batches": sum(e.batches for e in epochs),
    }


def _round(value, digits: int = 4):
    return None if value is None else round(float(value), digits)


def _location(verdict: Verdict) -> Optional[dict]:
    if not verdict.located:
        return None
    loc = verdict.finding.location
    return {"filename": verdict.finding.filename, "row": loc.row, "column": loc.column}


# -- JSON ------------------------------------------------------------------------------------------
def format_json(report: Report) -> str:
    data = {
        "script": report.script,
        "world_size": report.world_size,
        "evidence": report.has_evidence,
        "problem": report.problem,
        "problem_detail": report.problem_detail or None,
        "timed_out": report.timed_out,
        "emulated_gpus": report.emulated_gpus,
        "elapsed_s": _round(report.elapsed_s, 2),
        "findings": [
            {"code": v.finding.code, "status": v.status, "message": v.finding.message, "evidence": v.evidence,
             "location": _location(v), "source": v.source}
            for v in report.verdicts
        ],
        "ranks": [rank_row(rank, report) for rank in report.ranks],
        "gpus": (report.gpus or {}).get("devices", []),
    }
    return json.dumps(data, indent=2) + "\n"


# -- text ------------------------------------------------------------------------------------------
COLUMNS = ("rank", "node", "status", "steps", "1st batch", "coll. wait before", "step ms", "data ms",
           "compute ms", "coll. ms", "devices")


def format_text(report: Report) -> str:
    lines = [_finding_line(v) for v in report.verdicts]
    if not report.verdicts and report.has_evidence:
        lines.append(f"{report.script}: no static finding to verify, and the run showed no problem")
    if report.problem:
        lines.append(f"{report.script}: no evidence: {report.problem}")
        if report.problem_detail:
            lines.extend("    | " + line for line in report.problem_detail.splitlines())
    if report.ranks:
        lines.append("")
        lines.extend(_table([_text_row(rank_row(r, report)) for r in report.ranks]))
    for gpu in (report.gpus or {}).get("devices", []):
        lines.append(f"GPU {gpu['index']}: {gpu['util_mean']:.0f} % busy on average (max {gpu['util_max']:.0f} %), "
                     f"{gpu['mem_max_mib']:.0f} MiB at most")
    lines.append(_summary(report))
    return "\n".join(lines) + "\n"


def _finding_line(verdict: Verdict) -> str:
    finding = verdict.finding
    where = (f"{finding.filename}:{finding.location.row}:{finding.location.column}" if verdict.located
             else finding.filename)
    origin = "" if verdict.source == "static" else " (runtime only)"
    return f"{where}: {finding.code} {verdict.status}{origin}: {verdict.evidence}"


def _text_row(row: dict) -> tuple:
    def ms(key):
        return "-" if row[key] is None else f"{1000 * row[key]:.1f}"

    first = "-" if row["time_to_first_batch_s"] is None else f"{row['time_to_first_batch_s']:.2f} s"
    status = row["status"] + (f" (blocked in {row['blocked_in']})" if row["blocked_in"] else "")
    return (str(row["rank"]), str(row["node_rank"]), status, str(row["steps"]), first,
            f"{row['collective_wait_before_first_batch_s']:.2f} s", ms("step_s"), ms("data_wait_s"),
            ms("compute_s"), ms("collective_wait_s"), ",".join(row["devices"]) or "-")


def _table(rows: list) -> list:
    widths = [max(len(COLUMNS[i]), *(len(r[i]) for r in rows)) for i in range(len(COLUMNS))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*COLUMNS).rstrip(), *(fmt.format(*r).rstrip() for r in rows)]


def _summary(report: Report) -> str:
    counts = {s: sum(1 for v in report.verdicts if v.status == s) for s in ("confirmed", "refuted", "inconclusive")}
    stop = "stopped at the timeout" if report.timed_out else "done"
    rehearsal = (f"; CPU rehearsal with {report.emulated_gpus} logical GPUs per node" if report.emulated_gpus
                 else "")
    return (f"{counts['confirmed']} confirmed, {counts['refuted']} refuted, {counts['inconclusive']} inconclusive "
            f"({len(report.ranks)} of {report.world_size} ranks reported, {stop} after {report.elapsed_s:.1f} s"
            f"{rehearsal})")


# -- Chrome trace ----------------------------------------------------------------------------------
def chrome_trace(report: Report) -> dict:
    """One track per rank (a "process" per rank in Perfetto's terms) with data-wait, compute and
    collective-wait spans; collective spans nest inside the compute span they happened in."""
    events = []
    origin = min((r.started for r in report.ranks if r.started), default=0.0)

    def us(t: float) -> float:
        return round((t - origin) * 1e6, 1)

    for rank in report.ranks:
        events.append({"name": "process_name", "ph": "M", "pid": rank.rank, "args": {"name": f"rank {rank.rank}"}})
        events.append({"name": "process_sort_index", "ph": "M", "pid": rank.rank, "args": {"sort_index": rank.rank}})
        for previous, current in zip(rank.batches, rank.batches[1:] + [None]):
            events.append(_span("data-wait", us(previous["t"]), previous["wait"] * 1e6, rank.rank,
                                {"step": previous["step"]}))
            if current is not None and current.get("_epoch") == previous.get("_epoch"):
                body = previous["t"] + previous["wait"]
                events.append(_span("compute", us(body), (current["t"] - body) * 1e6, rank.rank,
                                    {"step": previous["step"]}))
        for coll in rank.collectives:
            duration = coll.duration if coll.duration is not None else max(report.stopped_at - coll.began, 0.0)
            events.append(_span(f"collective-wait: {coll.op}", us(coll.began), duration * 1e6, rank.rank,
                                {"op": coll.op, "unfinished": coll.duration is None}))
        if rank.buckets:  # asynchronous, overlapping backward: a track of their own
            events.append({"name": "thread_name", "ph": "M", "pid": rank.rank, "tid": BUCKET_TRACK,
                           "args": {"name": "DDP gradient all-reduce"}})
        for bucket in rank.buckets:
            events.append(_span(f"ddp-allreduce: bucket {bucket.get('index')}", us(bucket["t"]),
                                float(bucket.get("dur", 0.0)) * 1e6, rank.rank,
                                {"bucket": bucket.get("index"), "elements": bucket.get("numel")}, tid=BUCKET_TRACK))
        for epoch in rank.epochs:
            if epoch.began is not None:
                events.append({"name": f"epoch {epoch.number} (loader {epoch.loader})", "ph": "i", "s": "p",
                               "ts": us(epoch.began), "pid": rank.rank, "tid": 0, "cat": "epoch",
                               "args": {"loader": epoch.loader, "pass": epoch.number,
                                        "sampler_epoch": epoch.sampler_epoch}})
    return {"traceEvents": events, "displayTimeUnit": "ms"}


BUCKET_TRACK = 1  # the trace's thread id for DDP's bucket all-reduce spans (steps are on 0)


def _span(name: str, ts: float, dur: float, pid: int, args: dict, tid: int = 0) -> dict:
    return {"name": name, "ph": "X", "ts": ts, "dur": round(max(dur, 0.0), 1), "pid": pid, "tid": tid,
            "cat": name.split(":")[0], "args": args}
