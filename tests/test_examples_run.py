"""Every script in examples/ runs to completion under torchrun with 2 ranks.

Each run takes a few seconds on CPU (gloo). On a machine with at least 2 GPUs
the scripts take the NCCL path instead; with fewer GPUs than ranks the GPUs
are hidden so that the two ranks do not fight over one device.
"""

import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
import torch  # the example scripts need PyTorch (part of the test extra)

pytestmark = pytest.mark.slow  # starts torchrun

REPO = Path(__file__).resolve().parent.parent
NPROC = 2
TIMEOUT_S = 120
SCRIPTS = [
    "ddp001_missing_sampler_buggy.py",
    "ddp001_missing_sampler_fixed.py",
    "ddp002_missing_set_epoch_buggy.py",
    "ddp002_missing_set_epoch_fixed.py",
    "ddp003_data_parallel_buggy.py",
    "ddp003_data_parallel_fixed.py",
    "ddp004_rank_zero_preprocessing_buggy.py",
    "ddp004_rank_zero_preprocessing_fixed.py",
    "ddp005_all_ranks_one_device_buggy.py",
    "ddp005_all_ranks_one_device_fixed.py",
    "ddp008_load_without_map_location_buggy.py",
    "ddp008_load_without_map_location_fixed.py",
    "ddp009_unsharded_iterable_dataset_buggy.py",
    "ddp009_unsharded_iterable_dataset_fixed.py",
    "ddp010_rank_zero_only_evaluation_buggy.py",
    "ddp010_rank_zero_only_evaluation_fixed.py",
    "ddp011_per_rank_sampler_seed_buggy.py",
    "ddp011_per_rank_sampler_seed_fixed.py",
]


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        return sock.getsockname()[1]


def _descendants(pid):
    """PIDs of all live descendants of `pid` (Linux /proc; empty elsewhere)."""
    children = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The fields after the ")" that closes the command name: state, ppid, ...
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_tree(proc):
    """Stop torchrun and its workers (each worker runs in a session of its own)."""
    if os.name != "posix":
        proc.kill()
        return
    groups = {proc.pid}  # torchrun leads its own process group (start_new_session)
    for pid in _descendants(proc.pid):
        try:
            groups.add(os.getpgid(pid))
        except ProcessLookupError:
            pass
    groups.discard(os.getpgrp())  # never our own
    try:
        os.killpg(proc.pid, signal.SIGTERM)  # torchrun forwards it to the workers
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    for group in groups:  # whatever is left
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _tail(text, limit=4000):
    return text if len(text) <= limit else "...\n" + text[-limit:]


def _run_torchrun(script):
    """Run examples/<script> on NPROC ranks; returns (cmd, returncode, stdout, stderr, seconds)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    if torch.cuda.is_available() and torch.cuda.device_count() < NPROC:
        env["CUDA_VISIBLE_DEVICES"] = ""  # one GPU cannot host 2 NCCL ranks: run on CPU
    cmd = [sys.executable, "-m", "torch.distributed.run",
           "--nproc-per-node", str(NPROC), "--master-port", str(_free_port()),
           f"examples/{script}", "--epochs", "1"]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _kill_tree(proc)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # an orphan still holds the pipes
            out, err = "", "(output lost)"
        pytest.fail(f"{script} did not finish within {TIMEOUT_S} s\n"
                    f"--- stdout ---\n{_tail(out)}\n--- stderr ---\n{_tail(err)}")
    return cmd, proc.returncode, out, err, time.monotonic() - start


# torch 2.13 + gloo: every backward() stashes a Python object in thread-local
# state, the DDP all-reduce work items capture it, and a gloo worker thread that
# drops the last reference to one of them only after the interpreter has begun
# to shut down cannot take the GIL to free it: that rank aborts with this
# message once the script has finished. It came in 1 to 5 runs of 10 on 2 CPU
# cores (CI failed on three attempts in a row); each example now collects its
# garbage after main() returns: 1 failed run in about 80 since. Should it still
# happen, it says nothing about the example, so such a run is retried.
EXIT_ABORT = "terminate called without an active exception"
ATTEMPTS = 3


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_runs_under_torchrun(script):
    assert (REPO / "examples" / script).is_file(), f"missing example examples/{script}"
    for attempt in range(1, ATTEMPTS + 1):
        cmd, returncode, out, err, elapsed = _run_torchrun(script)
        report = (f"{' '.join(cmd)}\nexit code {returncode} after {elapsed:.1f} s "
                  f"(attempt {attempt} of {ATTEMPTS})\n"
                  f"--- stdout ---\n{_tail(out)}\n--- stderr ---\n{_tail(err)}")
        if returncode == 0 or EXIT_ABORT not in out + err or attempt == ATTEMPTS:
            break
        warnings.warn(f"{script}: a rank aborted at interpreter exit "
                      f"({EXIT_ABORT!r}, known torch/gloo issue); retrying", stacklevel=2)
    assert returncode == 0, report
    for rank in range(NPROC):  # every rank trained (and printed) its epoch
        assert f"[rank {rank}/{NPROC}] epoch 0:" in out, report
