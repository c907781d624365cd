"""Launch the script on N ranks with torchrun, each rank through the probe, and always clean up.

torchrun (`torch.distributed.run` of this interpreter, started isolated: see sweep.py) runs in a
session of its own; it starts every worker in yet another session, so killing torchrun's group is
not enough. At the end, whatever happened (a normal end, the timeout, SIGINT / SIGTERM / SIGHUP to
verify), every process group we know of is killed: torchrun's, each rank's (recorded by the probe
in its telemetry, which also covers DataLoader workers orphaned by a rank that exited) and those
of any descendant still alive; then every process carrying the run's mark. The clean-up itself
cannot be interrupted by those signals. The verify process's own group is never touched. When
verify is killed outright (SIGKILL), torchrun and the ranks die with their parents and the reaper
kills the rest (sweep.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from ddplint.verify.emulation import ENV_CPU_GPUS
from ddplint.verify.ranks import read_tail
from ddplint.verify.spawn import ENV_SPAWNER
from ddplint.verify.sweep import (
    ENV_PARENT,
    ENV_RUN_MARK,
    STOP_SIGNALS,
    isolated_command,
    kill_marked,
    new_run_mark,
)
from ddplint.verify.telemetry import (
    ENV_COLLECT_UNTIL,
    ENV_DIR,
    ENV_EPOCH_STEPS,
    ENV_MAX_STEPS,
    ENV_NODE_RANK,
    ENV_PASSTHROUGH,
    TelemetryTail,
    load_run,
)

POLL_S = 0.25
# After SIGTERM, how long torchrun gets to stop its workers before everything is killed.
TERM_GRACE_S = 3.0
# Every local rank has written its last record but torchrun is still up: give it this long.
EXIT_GRACE_S = 15.0
OUTPUT_TAIL_LINES = 20
# Node 0's collector stops waiting for other nodes this long before the launcher's timeout.
COLLECT_MARGIN_S = 5.0
# At the timeout: how long the ranks get to write their Python stacks before they are stopped.
STACK_DUMP_S = 1.0
# The reaper's last sweep (it finds nothing after ours) and its exit.
REAPER_EXIT_S = 5.0


@dataclass(frozen=True)
class LaunchConfig:
    script: str
    script_args: tuple[str, ...]
    run_dir: Path
    nproc: int = 2
    max_steps: int = 20
    epoch_steps: int = 5
    timeout_s: float = 120.0
    nnodes: int = 1
    node_rank: int = 0
    rdzv_endpoint: Optional[str] = None
    rdzv_backend: Optional[str] = None
    rdzv_id: Optional[str] = None
    show_output: bool = False
    # Multi-node only: True when --telemetry-dir names a directory all nodes share; otherwise the
    # telemetry of the other nodes comes through the rendezvous' c10d store.
    shared_dir: bool = False
    # verify --cpu: every rank sees `nproc` logical GPUs on the CPU (see emulation.py).
    cpu: bool = False
    # The script starts its own ranks (mp.spawn, multiprocessing): it runs once, without torchrun,
    # and its workers are followed (spawn.py).
    spawn: bool = False
    # In the environment of every process of the run, to find them all at the end (sweep.py).
    run_mark: str = field(default_factory=new_run_mark)

    @property
    def multi_node(self) -> bool:
        return self.nnodes > 1


@dataclass
class LaunchResult:
    returncode: Optional[int]
    timed_out: bool
    started_at: float  # wall clock, to line up with the ranks' telemetry
    stopped_at: float
    launcher_output: str = ""
    killed_groups: list[int] = field(default_factory=list)

    @property
    def elapsed_s(self) -> float:
        return self.stopped_at - self.started_at


def launch_command(config: LaunchConfig) -> list[str]:
    if config.spawn:
        # The script is its own launcher: run once, as `python SCRIPT` would, through the probe.
        return isolated_command("ddplint.verify.probe", config.script, *config.script_args)
    return torchrun_command(config)


def torchrun_command(config: LaunchConfig) -> list[str]:
    # --log-dir: torchrun's own folders go into the run directory, not a new one in the temp folder per run.
    command = isolated_command("torch.distributed.run", "--nproc-per-node", str(config.nproc), "--max-restarts", "0",
                               "--log-dir", str(config.run_dir / f"torchrun-node{config.node_rank}"))
    if config.multi_node or config.rdzv_endpoint:
        command += ["--nnodes", str(config.nnodes), "--node-rank", str(config.node_rank)]
        for option, value in (("--rdzv-endpoint", config.rdzv_endpoint), ("--rdzv-backend", config.rdzv_backend),
                              ("--rdzv-id", config.rdzv_id)):
            if value:
                command += [option, value]
    else:
        # A c10d store on a port the OS picks: two verifies on one machine never collide.
        command += ["--standalone"]
    # --no-python: each worker is the command that follows, the probe started isolated like torchrun.
    return command + ["--no-python", *isolated_command("ddplint.verify.probe", config.script, *config.script_args)]


def rank_environment(config: LaunchConfig, started: float) -> dict[str, str]:
    env = dict(os.environ)
    if config.multi_node and not config.shared_dir:
        # Node 0's collector must be done (and exit) before the launcher's timeout kills it.
        env[ENV_COLLECT_UNTIL] = str(started + max(config.timeout_s - COLLECT_MARGIN_S, 1.0))
    env.update({
        ENV_DIR: str(config.run_dir),
        ENV_MAX_STEPS: str(config.max_steps),
        ENV_EPOCH_STEPS: str(config.epoch_steps),
        ENV_NODE_RANK: str(config.node_rank),
        ENV_RUN_MARK: config.run_mark,
        ENV_PARENT: str(os.getpid()),
        "PYTHONUNBUFFERED": "1",
    })
    env.setdefault("OMP_NUM_THREADS", "1")  # torchrun's own default, without its warning
    if config.show_output:
        env[ENV_PASSTHROUGH] = "1"
    if config.spawn:
        env[ENV_SPAWNER] = "1"
    if config.cpu:
        env[ENV_CPU_GPUS] = str(config.nproc)
        env["CUDA_VISIBLE_DEVICES"] = ""  # a real GPU must not take part in the rehearsal
    # The probe must import from the same ddplint as this process, installed or not.
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    return env


class StopRequested(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP reached verify: the run is stopped and cleaned up like ^C."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signal_name = signal.Signals(signum).name


@contextlib.contextmanager
def stop_signals_raise():
    """While inside, SIGINT / SIGTERM / SIGHUP raise StopRequested, so that the `finally` clauses
    that stop the run and remove its directory run for each of them; the handlers are restored after."""
    def handler(signum, frame):
        raise StopRequested(signum)

    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers (verify called from a thread: the caller's business)
        return
    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


@contextlib.contextmanager
def stop_signals_held():
    """The stop signals wait (blocked, not lost) until the block ends: a clean-up is never cut in the
    middle. Nothing may be started inside: a child would inherit the blocked signals."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def launch(config: LaunchConfig, progress: Optional[Callable[[TelemetryTail], None]] = None) -> LaunchResult:
    """Run torchrun to completion, to the timeout, or until every local rank has finished."""
    log_path = config.run_dir / f"torchrun-node{config.node_rank}.log"
    started = time.time()
    process: Optional[subprocess.Popen] = None
    reaper: Optional[subprocess.Popen] = None
    killed: list[int] = []
    with open(log_path, "wb") as log:
        # --show-output sends the ranks' output to our stderr: stdout carries the report (JSON).
        output = sys.stderr if config.show_output else log
        try:
            reaper = start_reaper(config.run_mark)
            process = subprocess.Popen(
                launch_command(config), env=rank_environment(config, started), stdin=subprocess.DEVNULL,
                stdout=output, stderr=output, start_new_session=True,
            )
            timed_out = _supervise(process, config, started, progress)
            if timed_out:
                dump_rank_stacks(config.run_dir, config.node_rank, since=started)
        finally:
            # Also after a stop signal that came before torchrun's handle was ours: the run's mark
            # still finds whatever started.
            with stop_signals_held():
                if process is not None:
                    killed = stop_process_tree(process, config, since=started)
                kill_marked(config.run_mark)
                stop_reaper(reaper)
    return LaunchResult(
        returncode=process.returncode, timed_out=timed_out, started_at=started, stopped_at=time.time(),
        launcher_output=read_tail(log_path, OUTPUT_TAIL_LINES), killed_groups=killed,
    )


def start_reaper(run_mark: str) -> Optional[subprocess.Popen]:
    """The process that kills the run's marked processes if verify dies without cleaning up (sweep.py).
    `-I`: it imports nothing from the current directory, the script's or PYTHONPATH."""
    if not Path("/proc").is_dir():
        return None  # it finds the run's processes through /proc
    sweep = Path(__file__).resolve().with_name("sweep.py")
    return subprocess.Popen([sys.executable, "-I", str(sweep), run_mark], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def stop_reaper(reaper: Optional[subprocess.Popen]) -> None:
    """The run is cleaned up: the reaper's last sweep finds nothing and it exits."""
    if reaper is None:
        return
    try:
        reaper.stdin.close()  # type: ignore[union-attr]
    except OSError:
        pass
    try:
        reaper.wait(timeout=REAPER_EXIT_S)
    except subprocess.TimeoutExpired:
        reaper.kill()


def _supervise(process, config: LaunchConfig, started: float, progress) -> bool:
    """Wait for torchrun; True when the timeout ran out first."""
    tail = TelemetryTail(config.run_dir)
    all_ended_at = None
    while process.poll() is None:
        if time.time() - started > config.timeout_s:
            return True
        tail.poll()
        if progress is not None:
            progress(tail)
        local_ended = [r for r in tail.ended if tail.node_of.get(r) == config.node_rank]
        if len(local_ended) >= config.nproc:
            all_ended_at = all_ended_at or time.time()
            if time.time() - all_ended_at > EXIT_GRACE_S:
                return False  # the evidence is complete; a lingering torchrun is stopped below
        time.sleep(POLL_S)
    return False


def stop_process_tree(process: subprocess.Popen, config: LaunchConfig, since: float) -> list[int]:
    """SIGTERM torchrun (it forwards the signal to its workers), then SIGKILL every process group
    of this launch that is left, then every process that carries the run's mark (a descendant that
    left its session or lost its parent). Returns the groups that were sent SIGKILL."""
    if process.poll() is None:
        _signal_group(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=TERM_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
    groups = {process.pid} | _rank_groups(config.run_dir, config.node_rank, since) | _descendant_groups(process.pid)
    groups.discard(os.getpgrp())
    killed = [g for g in sorted(groups) if _signal_group(g, signal.SIGKILL)]
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    return killed


def dump_rank_stacks(run_dir: Path, node_rank: int, since: float) -> None:
    """Ask every rank of this node for its Python stacks (SIGUSR1: the probe's faulthandler writes
    them to rank-N.stack) before the ranks are stopped; give them a moment to write."""
    sent = False
    for pid in _rank_pids(run_dir, node_rank, since):
        try:
            os.kill(pid, signal.SIGUSR1)
            sent = True
        except (ProcessLookupError, PermissionError):
            pass
    if sent:
        time.sleep(STACK_DUMP_S)


def _signal_group(pgid: int, signum: int) -> bool:
    try:
        os.killpg(pgid, signum)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _rank_groups(run_dir: Path, node_rank: int, since: float) -> set[int]:
    """Process groups the probes of this node recorded (a shared directory also holds the other
    nodes' ranks: those are not ours to kill)."""
    return {int(start["pgid"]) for start in _local_starts(run_dir, node_rank, since)}


def _rank_pids(run_dir: Path, node_rank: int, since: float) -> set[int]:
    return {int(start["pid"]) for start in _local_starts(run_dir, node_rank, since)}


def _local_starts(run_dir: Path, node_rank: int, since: float) -> list[dict]:
    host = socket.gethostname()
    starts = []
    for records in load_run(run_dir, since=since).values():
        start = records[0] if records and records[0]["kind"] == "start" else None
        if start and start.get("host") == host and int(start.get("node_rank", -1)) == node_rank:
            starts.append(start)
    return starts


def _descendant_groups(root_pid: int) -> set[int]:
    """Process groups of all live descendants of root_pid (Linux /proc; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after the command name: state, ppid, pgrp
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    groups, todo = set(), [root_pid]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            try:
                groups.add(os.getpgid(child))
            except ProcessLookupError:
                pass
    return groups
