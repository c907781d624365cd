"""`ddplint verify SCRIPT [options] [-- SCRIPT_ARGS ...]`: static check, a short run on N ranks,
a verdict per finding.

Exit codes: 0 nothing confirmed, 1 something confirmed, 2 no evidence (bad arguments, a script
that could not run to its first batch, a run that timed out before it).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import shlex
import shutil
import sys
import tempfile
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Optional, Sequence

from ddplint.api import lint_file
from ddplint.rules import ERROR_CODE, select_rules
from ddplint.verify import nvml, provenance
from ddplint.verify.launcher import LaunchConfig, LaunchResult, StopRequested, launch, stop_signals_raise
from ddplint.verify.ranks import Spawner, load_spawner, summarise
from ddplint.verify.report import Report, chrome_trace, format_json, format_text
from ddplint.verify.telemetry import TelemetryTail, load_run, rank_log, stack_file
from ddplint.verify.verdicts import CONFIRMED, RunContext, judge_run

EXIT_CLEAN, EXIT_CONFIRMED, EXIT_NO_EVIDENCE = 0, 1, 2
PROG = "ddplint verify"
# Multi-node: how long node 0 waits, after its own ranks are done, for the other nodes' files.
REMOTE_GRACE_S = 30.0
# Without a terminal, a progress line this often (seconds).
PROGRESS_INTERVAL_S = 10.0


class UsageError(Exception):
    """Bad arguments: one line for the user, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run SCRIPT briefly on N ranks (torchrun) and confirm or refute the static findings "
                    "with measurements. Arguments after `--` go to the script.",
    )
    parser.add_argument("script", metavar="SCRIPT", help="the training script")
    parser.add_argument("--nproc", type=_positive_int, default=2, help="ranks on this node (default: 2)")
    parser.add_argument("--max-steps", type=_positive_int, default=20,
                        help="stop every rank after this many batches (default: 20)")
    parser.add_argument("--epoch-steps", type=_non_negative_int, default=None,
                        help="end each epoch early after this many batches so that epoch boundaries fall "
                             "inside the budget (default: max-steps // 4, at least 2; 0: never)")
    parser.add_argument("--timeout", type=_positive_float, default=120.0,
                        help="stop everything after this many seconds (default: 120)")
    parser.add_argument("--cpu", action="store_true",
                        help="rehearse a script written for GPUs on CPU ranks: each rank sees one logical GPU per "
                             "rank of the node, device requests run on the CPU and are recorded, nccl becomes gloo "
                             "(see docs/verify.md for what is emulated)")
    parser.add_argument("--launcher", choices=("auto", "torchrun", "script"), default="auto",
                        help="how the ranks start: torchrun starts them; `script`: the script starts them itself "
                             "(torch.multiprocessing.spawn, multiprocessing) and runs once; auto (default): "
                             "`script` when the script calls spawn / start_processes / Process")
    parser.add_argument("--extend-select", metavar="CODES", type=_codes, default=[],
                        help="also check these rules, comma-separated (e.g. the opt-in DDP012)")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    parser.add_argument("--trace", metavar="FILE", help="write a Chrome trace (open in Perfetto)")
    parser.add_argument("--show-output", action="store_true",
                        help="let the ranks print to this terminal instead of capturing their output")
    multi = parser.add_argument_group("multi-node (passed to torchrun; every node runs the same command)")
    multi.add_argument("--nnodes", type=_positive_int, default=1, help="number of nodes (default: 1)")
    multi.add_argument("--node-rank", type=_non_negative_int, default=0, help="this node's rank (default: 0)")
    multi.add_argument("--rdzv-endpoint", metavar="HOST:PORT", help="rendezvous endpoint (node 0's address)")
    multi.add_argument("--rdzv-backend", help="torchrun rendezvous backend (default: torchrun's, static)")
    multi.add_argument("--rdzv-id", help="job id, also the subdirectory of --telemetry-dir for this run")
    multi.add_argument("--telemetry-dir", metavar="DIR",
                       help="keep the telemetry in DIR; on several nodes, a directory every node can write "
                            "(shared file system) from which node 0 reads all ranks' telemetry. Without it, "
                            "the other nodes' telemetry travels through the rendezvous' c10d store.")
    return parser


def _codes(text: str) -> list:
    codes = [code.strip().upper() for code in text.split(",") if code.strip()]
    try:
        matched = bool(codes) and bool(select_rules(select=codes))
    except ValueError:  # a selector no rule code starts with
        matched = False
    if not matched:
        raise argparse.ArgumentTypeError(f"no rule matches {text!r}")
    return codes


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    argv = list(argv)
    script_args: list = []
    if "--" in argv:
        split = argv.index("--")
        argv, script_args = argv[:split], argv[split + 1:]
    args = build_parser().parse_args(argv)
    args.script_args = script_args
    args.argv = list(argv) + (["--", *script_args] if script_args else [])
    if args.epoch_steps is None:
        args.epoch_steps = max(2, args.max_steps // 4)
    return args


def main(argv: Sequence[str]) -> int:
    try:
        args = parse_args(argv)
    except SystemExit as exc:  # argparse has printed its one-line error (or --help)
        return EXIT_NO_EVIDENCE if exc.code else EXIT_CLEAN
    try:
        _check_inputs(args)
        static = _static_findings(args.script, args.extend_select)
        args.spawn = _starts_own_ranks(args)
    except UsageError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_NO_EVIDENCE
    with stop_signals_raise():
        return _run_and_clean_up(args, static)


def _run_and_clean_up(args: argparse.Namespace, static: list) -> int:
    """SIGINT, SIGTERM and SIGHUP stop the run the same way: every process of it is stopped (the
    launcher's clean-up) and a temporary run directory removed."""
    try:
        run_dir, temporary = _run_directory(args)
    except UsageError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_NO_EVIDENCE
    try:
        return _verify(args, static, run_dir)
    except KeyboardInterrupt as exc:
        what = f"stopped by {exc.signal_name}" if isinstance(exc, StopRequested) else "interrupted"
        _say(f"{PROG}: {what}; every process of the run was stopped")
        return EXIT_NO_EVIDENCE
    finally:
        if temporary:
            shutil.rmtree(run_dir, ignore_errors=True)


def _say(line: str) -> None:
    """A last line on stderr, which may be gone (SIGHUP: the terminal closed)."""
    try:
        print(line, file=sys.stderr)
    except (OSError, ValueError):
        pass


def _check_inputs(args: argparse.Namespace) -> None:
    script = Path(args.script)
    if not script.exists():
        raise UsageError(f"{args.script}: no such file")
    if not script.is_file():
        raise UsageError(f"{args.script}: not a file")
    if importlib.util.find_spec("torch") is None:
        raise UsageError(f"torch is not installed for {sys.executable}: verify runs the script with it")
    if args.nnodes > 1 and not args.rdzv_endpoint:
        raise UsageError("--nnodes > 1 needs --rdzv-endpoint HOST:PORT (node 0's address)")
    if args.node_rank >= args.nnodes:
        raise UsageError(f"--node-rank {args.node_rank} is out of range for --nnodes {args.nnodes}")


def _static_findings(script: str, extend_select: Sequence[str] = ()) -> list:
    _check_syntax(script)
    rules = select_rules()
    if extend_select:
        chosen = {rule.code for rule in rules} | {rule.code for rule in select_rules(select=extend_select)}
        rules = select_rules(select=sorted(chosen))
    findings = lint_file(script, rules)
    for finding in findings:
        if finding.code == ERROR_CODE:  # unreadable or a syntax error: it could not run either
            raise UsageError(f"{finding.filename}:{finding.location.row}:{finding.location.column}: {finding.message}")
    return findings


# Calls that start worker processes from the script itself (torch.multiprocessing.spawn /
# start_processes, multiprocessing.Process / a context's Process).
SPAWN_CALLS = frozenset({"spawn", "start_processes", "Process"})
MULTIPROCESSING_MODULES = ("multiprocessing", "torch.multiprocessing")


def _starts_own_ranks(args: argparse.Namespace) -> bool:
    """--launcher script, or (auto) the script imports multiprocessing and calls one of SPAWN_CALLS."""
    if args.launcher != "auto":
        spawn = args.launcher == "script"
    else:
        spawn = _calls_spawn(Path(args.script).read_bytes())
    if spawn and args.nnodes > 1:
        raise UsageError("a script that starts its own ranks runs on one node (--nnodes 1)")
    return spawn


def _calls_spawn(source: bytes) -> bool:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    imports_multiprocessing = False
    calls = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports_multiprocessing |= any(a.name in MULTIPROCESSING_MODULES for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imports_multiprocessing |= (node.module or "") in MULTIPROCESSING_MODULES or (
                node.module == "torch" and any(a.name == "multiprocessing" for a in node.names))
        elif isinstance(node, ast.Call):
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
            calls |= name in SPAWN_CALLS
    return imports_multiprocessing and calls


def _check_syntax(script: str) -> None:
    """The static check skips files without its trigger words, so a script that cannot even be
    compiled is caught here, before N ranks are started to fail on it."""
    try:
        source = Path(script).read_bytes()
    except OSError as exc:
        raise UsageError(f"{script}: cannot read: {exc.strerror or exc}") from None
    try:
        compile(source, script, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        raise UsageError(f"{script}:{exc.lineno or 1}:{exc.offset or 1}: syntax error: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise UsageError(f"{script}: cannot compile: {type(exc).__name__}") from None


def _run_directory(args: argparse.Namespace) -> tuple[Path, bool]:
    if args.telemetry_dir:
        directory = Path(args.telemetry_dir) / (args.rdzv_id or "ddplint-verify")
        if Path(args.telemetry_dir).exists() and not Path(args.telemetry_dir).is_dir():
            raise UsageError(f"--telemetry-dir {args.telemetry_dir}: not a directory")
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--telemetry-dir {args.telemetry_dir}: cannot create {directory}: "
                             f"{exc.strerror or exc}") from None
        return directory, False
    try:
        return Path(tempfile.mkdtemp(prefix="ddplint-verify-")), True
    except OSError as exc:
        raise UsageError(f"cannot create a run directory in {tempfile.gettempdir()}: {exc.strerror or exc}") from None


def _verify(args: argparse.Namespace, static: list, run_dir: Path) -> int:
    config = LaunchConfig(
        script=args.script, script_args=tuple(args.script_args), run_dir=run_dir, nproc=args.nproc,
        max_steps=args.max_steps, epoch_steps=args.epoch_steps, timeout_s=args.timeout, nnodes=args.nnodes,
        node_rank=args.node_rank, rdzv_endpoint=args.rdzv_endpoint, rdzv_backend=args.rdzv_backend,
        rdzv_id=args.rdzv_id, show_output=args.show_output, shared_dir=bool(args.telemetry_dir), cpu=args.cpu,
        spawn=args.spawn,
    )
    cache_dir = provenance.cache_directory(args.script) if args.cpu else None
    if cache_dir is not None:
        provenance.seed_run(run_dir, cache_dir)  # which device saved the files an earlier rehearsal wrote
    result, gpus = _run(config, progress=not args.show_output)
    if cache_dir is not None:
        why = provenance.remember(run_dir, cache_dir)
        if why:
            _say(f"{PROG}: the devices of the files this run saved are not kept: {why}")
    if config.node_rank != 0:
        return _report_from_other_node(config, result)
    ranks, stopped_at = _collect_ranks(config, result)
    context = RunContext(ranks=ranks, script=args.script, stopped_at=stopped_at, nvml=gpus, timed_out=result.timed_out)
    verdicts = judge_run(static, context)
    spawner = load_spawner(run_dir, since=result.started_at) if config.spawn else None
    problem, detail = _no_evidence(ranks, result, verdicts, args.timeout, spawner)
    if problem and not args.cpu and _needs_a_gpu(problem, ranks, spawner):
        problem, detail = _rehearse_on_cpu(problem, args), ""
    report = Report(script=args.script, world_size=config.nproc * config.nnodes, verdicts=verdicts, ranks=ranks,
                    timed_out=result.timed_out, elapsed_s=result.elapsed_s, stopped_at=stopped_at,
                    problem=problem, problem_detail=detail, gpus=gpus,
                    emulated_gpus=config.nproc if config.cpu else None)
    sys.stdout.write(format_json(report) if args.output_format == "json" else format_text(report))
    if args.trace:
        _write_trace(args.trace, report)
    if any(v.status == CONFIRMED for v in verdicts):
        return EXIT_CONFIRMED
    return EXIT_NO_EVIDENCE if problem else EXIT_CLEAN


def _run(config: LaunchConfig, progress: bool) -> tuple[LaunchResult, Optional[dict]]:
    """Launch, with NVML sampling (when there is a GPU) and live progress (on a terminal)."""
    sampler = nvml.start_sampler()
    line: Optional[Progress] = None
    if progress:
        line = ProgressLine(config.max_steps) if _is_terminal(sys.stderr) else ProgressLog(config.max_steps)
    try:
        result = launch(config, line)
    finally:
        if line is not None:
            line.done()
        gpus = sampler.stop() if sampler is not None else None
    return result, gpus


def _collect_ranks(config: LaunchConfig, result: LaunchResult) -> tuple[list, float]:
    """Every rank's summary (all nodes' when the directory is shared), and the time the run counts
    as stopped (open collectives are counted up to it)."""
    if not config.multi_node:
        stopped_at = result.stopped_at
    else:
        world_size = config.nproc * config.nnodes
        _wait_for_remote_ranks(config.run_dir, world_size, result.started_at,
                               deadline=result.started_at + config.timeout_s + REMOTE_GRACE_S)
        stopped_at = time.time()
    ranks = [summarise(rank, records, rank_log(config.run_dir, rank), stack_file(config.run_dir, rank))
             for rank, records in load_run(config.run_dir, since=result.started_at).items()]
    return ranks, stopped_at


def _no_evidence(ranks: list, result: LaunchResult, verdicts: list, timeout: float,
                 spawner: Optional[Spawner] = None) -> tuple[Optional[str], str]:
    """Why the run could not produce evidence, and the output that shows it; (None, "") when it did."""
    refused = next((r for r in ranks if r.end and r.end.get("reason") == "not-emulatable"), None)
    if refused is not None:  # verify --cpu met GPU-only code: one line naming the call, no traceback
        return f"rank {refused.rank}: {refused.end.get('error')}", ""
    if any(v.status == CONFIRMED for v in verdicts):
        return None, ""
    # The first to fail is the cause; the others typically fail because it went away.
    crashed = sorted((r for r in ranks if r.crashed or (r.end and r.end.get("exit_code"))),
                     key=lambda r: r.end.get("t", 0.0))
    if any(r.steps for r in ranks):
        if not crashed:
            return None, ""
        # Batches were drawn, but a rank that failed makes the run unfit to refute anything (the
        # others stopped early or ran on without it), even when they exited with 0.
        return _crash_line(crashed), crashed[0].log_tail
    if not ranks and spawner is not None:
        return _no_rank_spawned(spawner), spawner.worker_output or result.launcher_output
    if not ranks and result.timed_out:
        return (f"no rank started within the timeout ({timeout:g} s): torchrun was still waiting for the "
                f"rendezvous (on several nodes: is verify running on every node?)"), result.launcher_output
    if not ranks:
        return "no rank started (torchrun failed before running the probe)", result.launcher_output
    if crashed:
        missing = _missing_data(crashed[0])
        if missing:
            return missing, ""
        return _crash_line(crashed), crashed[0].log_tail
    if result.timed_out:
        where = _where_ranks_were(ranks, result.stopped_at)
        return f"stopped at the timeout ({timeout:g} s) before any batch: {where}", ""
    silent = [r for r in ranks if r.end is None]
    if silent:
        return (f"rank {silent[0].rank} died before its first batch without a last record "
                f"(killed, or aborted inside native code)", silent[0].log_tail)
    if not any(r.loaders for r in ranks):
        return "the script finished on every rank without building a DataLoader: nothing to measure", ""
    return "the script finished on every rank without drawing a batch from its DataLoader", ""


def _no_rank_spawned(spawner: Spawner) -> str:
    """The script starts its own ranks (--launcher script) but none reported."""
    if spawner.error:
        started = "after starting workers that never became ranks" if spawner.spawns else "before starting its ranks"
        return f"the script's main process failed {started}: {spawner.error}"
    if spawner.spawns and not any(s.get("nprocs") for s in spawner.spawns):
        site = spawner.spawns[0].get("site") or {}
        where = f" at {site.get('file')}:{site.get('line')}" if site.get("line") else ""
        return (f"the script started no rank: it asked for nprocs=0 workers{where} "
                f"(torch.cuda.device_count() is {spawner.spawns[0].get('cuda_devices')} here)")
    if spawner.ended:
        return "the script's main process finished without starting a rank (no worker called init_process_group)"
    return "the script's main process stopped without starting a rank"


# What torch says when a script needs CUDA on a machine without a usable GPU.
NO_GPU_ERRORS = ("Torch not compiled with CUDA enabled", "has no attribute '_cuda_", "No CUDA GPUs are available",
                 "Found no NVIDIA driver", "no CUDA-capable device", "CUDA driver initialization failed",
                 "torch.cuda.device_count() is 0")


def _needs_a_gpu(problem: str, ranks: list, spawner: Optional[Spawner]) -> bool:
    texts = [problem] + [str(r.end.get("error", "")) for r in ranks if r.end]
    return any(marker in text for text in texts for marker in NO_GPU_ERRORS)


def _rehearse_on_cpu(problem: str, args: argparse.Namespace) -> str:
    """One line: what failed, and the command that rehearses the script on CPU ranks."""
    command = " ".join(shlex.quote(a) for a in [*PROG.split(), "--cpu", *args.argv])
    return f"{problem.splitlines()[0]}; this machine has no usable GPU: rehearse on CPU ranks with `{command}`"


def _crash_line(crashed: list) -> str:
    """`rank R crashed before its first batch / after N steps: ERROR (then ranks ... failed too)`."""
    first, *after = crashed
    what = first.end.get("error") or f"exit code {first.end.get('exit_code')}"
    when = f"after {first.steps} steps" if first.steps else "before its first batch"
    then = f" (then {_ranks_text(r.rank for r in after)} failed too)" if after else ""
    return f"rank {first.rank} crashed {when}: {what}{then}"


def _missing_data(rank) -> Optional[str]:
    """A rank that stopped on a FileNotFoundError: the script's data is not on this machine."""
    path = rank.end.get("missing_path")
    if not path:
        return None
    site = rank.end.get("site") or {}
    where = f" (read at {site['file']}:{site['line']})" if site.get("line") else ""
    what = f"{path} does not exist" if rank.end.get("error", "").startswith("FileNotFoundError: [Errno") else path
    return (f"the script's data is missing: {what}{where}; verify runs the script for real, "
            f"so the files it reads must be on this machine (or pass the script a path to them after --)")


def _ranks_text(ranks) -> str:
    ranks = list(ranks)
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def _where_ranks_were(ranks: list, stopped_at: float) -> str:
    parts = []
    for rank in ranks:
        coll = rank.open_collective()
        if coll is not None:
            parts.append(f"rank {rank.rank} blocked in {coll.op} for {max(stopped_at - coll.began, 0):.1f} s")
        else:
            parts.append(f"rank {rank.rank} still running the script")
    return "; ".join(parts)


def _report_from_other_node(config: LaunchConfig, result: LaunchResult) -> int:
    local = [summarise(rank, records) for rank, records in load_run(config.run_dir, since=result.started_at).items()
             if records and records[0].get("node_rank") == config.node_rank]
    steps = ", ".join(f"rank {r.rank}: {r.steps} steps" for r in local) or "no rank started"
    where = f"is in {config.run_dir}" if config.shared_dir else "went to node 0 through the c10d store"
    print(f"{PROG}: node {config.node_rank} done ({steps}); its telemetry {where}, node 0 prints the report")
    return EXIT_CLEAN if any(r.steps for r in local) else EXIT_NO_EVIDENCE


def _wait_for_remote_ranks(run_dir: Path, world_size: int, since: float, deadline: float) -> None:
    """Node 0 is done; the other nodes' ranks may still be finishing (or their files arriving on a
    shared file system)."""
    while time.time() < deadline:
        runs = load_run(run_dir, since=since)
        if not runs:
            return  # not even this node's ranks started: the rendezvous never completed
        if len(runs) >= world_size and all(any(r["kind"] == "end" for r in recs) for recs in runs.values()):
            return
        time.sleep(0.5)


def _write_trace(path: str, report: Report) -> None:
    import json

    try:
        Path(path).write_text(json.dumps(chrome_trace(report)))
    except OSError as exc:
        print(f"{PROG}: {path}: cannot write the trace: {exc.strerror or exc}", file=sys.stderr)


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress(ABC):
    """Training steps per rank while the ranks run, on stderr (stdout carries the report)."""

    def __init__(self, max_steps: int):
        self.max_steps = max_steps

    def steps_text(self, tail: TelemetryTail) -> str:
        # Never past the budget: a rank stops when it asks for step max_steps + 1.
        return "  ".join(f"rank {r} {min(s, self.max_steps)}/{self.max_steps}" for r, s in sorted(tail.steps.items()))

    @abstractmethod
    def __call__(self, tail: TelemetryTail) -> None:
        """Show the ranks' progress so far (called every poll)."""

    def done(self) -> None:  # optional: only the rewritten terminal line clears itself
        return None


class ProgressLine(Progress):
    """Steps per rank on one rewritten stderr line (terminals)."""

    def __init__(self, max_steps: int):
        super().__init__(max_steps)
        self._last = ""

    def __call__(self, tail: TelemetryTail) -> None:
        text = "steps: " + self.steps_text(tail)
        if text != self._last:
            sys.stderr.write("\r\033[K" + text)
            sys.stderr.flush()
            self._last = text

    def done(self) -> None:
        if self._last:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


class ProgressLog(Progress):
    """Without a terminal (a CI log): one line every PROGRESS_INTERVAL_S (DDPLINT_VERIFY_PROGRESS_S
    sets another), with the steps and the time spent waiting for data per rank."""

    def __init__(self, max_steps: int):
        super().__init__(max_steps)
        self.started = time.monotonic()
        self.interval = _positive_env_float("DDPLINT_VERIFY_PROGRESS_S", PROGRESS_INTERVAL_S)
        self._next = self.started + self.interval

    def __call__(self, tail: TelemetryTail) -> None:
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + self.interval
        if not tail.steps:
            text = "no rank has reported yet (starting: importing torch, rendezvous)"
        else:
            waits = ", ".join(f"rank {r} {w:.1f} s" for r, w in sorted(tail.data_wait.items()))
            text = f"steps: {self.steps_text(tail)}; data wait: {waits or '-'}"
        _say(f"{PROG}: {now - self.started:.0f} s: {text}")


def _positive_env_float(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default
