"""How much the verify probe slows a training step down.

Runs one small DDP training script under torchrun on 2 CPU ranks (gloo), alternately without the
probe (plain torchrun) and with it (`-m ddplint.verify.probe`, as `ddplint verify` runs it, with
the epoch cut and the step budget out of the way), and compares the median step time the script
itself measures, and the CPU time per step of each rank (time.process_time, all threads), which a
loaded machine disturbs much less than wall-clock time. Two model sizes show that the probe's
cost is per batch (a few tens of microseconds: timing, one JSON line, one write), so its share
shrinks as steps grow.

    python benchmarks/verify_overhead.py [--repeats 5] [--steps 150] [--widths 64,512] [--rehearsal-only]

It first measures the probe's cost per batch in isolation (one process iterating a loader, plain
vs instrumented, CPU time of the loop, best of 3 x 7), then what `verify --cpu`'s emulation adds to
one training step (one process, device "cuda" run on the CPU, against the same step on "cpu"
without the probe), then the end-to-end step times. Prints a table; the aim is an overhead under
5 % on realistic steps.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

TRAIN = textwrap.dedent("""
    import json, os, sys, time
    import torch, torch.distributed as dist, torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

    width, steps, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64 * steps, width), torch.randn(64 * steps, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    model = DDP(nn.Sequential(nn.Linear(width, 4 * width), nn.ReLU(), nn.Linear(4 * width, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    marks, cpu = [], []
    for x, y in loader:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        marks.append(time.perf_counter())
        cpu.append(time.process_time())
    warm = 10  # steps left out at the start
    step_times = sorted(b - a for a, b in zip(marks[warm:], marks[warm + 1:]))
    result = {"median_step_s": step_times[len(step_times) // 2],
              "cpu_per_step_s": (cpu[-1] - cpu[warm]) / (len(cpu) - 1 - warm), "steps": len(marks)}
    with open(f"{out}.{dist.get_rank()}", "w") as handle:
        json.dump(result, handle)
    dist.barrier()
""")


# The probe's own cost per batch, without training or a second rank to blur it: iterate a loader
# in one process, plain or with the probe installed (as in a rank), best of several rounds.
LOADER_ONLY = textwrap.dedent("""
    import os, sys, time
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    if sys.argv[1] == "probe":
        from ddplint.verify.probe import Probe
        from ddplint.verify.telemetry import TelemetryWriter, rank_file
        Probe(TelemetryWriter(rank_file(sys.argv[2], 0)), __file__, max_steps=10**9, epoch_steps=0).install()
    loader = DataLoader(TensorDataset(torch.arange(32 * 2000)), batch_size=32, shuffle=True)
    best = float("inf")
    for _ in range(7):  # CPU time of this one thread: barely disturbed by other work on the machine
        start = time.thread_time()
        for batch in loader:
            pass
        best = min(best, (time.thread_time() - start) / len(loader))
    print(best)
""")


# `verify --cpu`: what the emulation adds to a training step. Every torch call goes through its
# TorchFunctionMode (device arguments rewritten), so the cost is per torch call, not per batch.
REHEARSAL_STEP = textwrap.dedent("""
    import sys, time
    import torch, torch.nn as nn
    device = "cpu"
    if sys.argv[1] == "cpu-rehearsal":
        from ddplint.verify.probe import Probe
        from ddplint.verify.telemetry import TelemetryWriter, rank_file
        Probe(TelemetryWriter(rank_file(sys.argv[2], 0)), __file__, max_steps=10**9, epoch_steps=0).install(1)
        device = "cuda"  # as the GPU script writes it; the emulation runs it on the CPU
    width = int(sys.argv[3])
    model = nn.Sequential(nn.Linear(width, 4 * width), nn.ReLU(), nn.Linear(4 * width, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, width), torch.randn(32, 1)
    best = float("inf")
    for _ in range(7):
        start = time.thread_time()
        for _ in range(100):
            opt.zero_grad()
            nn.functional.mse_loss(model(x.to(device)), y.to(device)).backward()
            opt.step()
        best = min(best, (time.thread_time() - start) / 100)
    print(best)
""")


def rehearsal_cost(workdir: Path, width: int, rounds: int = 3) -> tuple[float, float]:
    """CPU seconds per training step in one process, (plain CPU script, the same under the --cpu
    emulation with device "cuda"): best of `rounds` alternating runs of each."""
    script = workdir / "rehearsal_step.py"
    script.write_text(REHEARSAL_STEP)
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO), CUDA_VISIBLE_DEVICES="")
    best = {"plain": float("inf"), "cpu-rehearsal": float("inf")}
    for _ in range(rounds):
        for mode in best:
            out = subprocess.run([sys.executable, str(script), mode, str(workdir), str(width)], env=env, check=True,
                                 capture_output=True, text=True, timeout=600).stdout
            best[mode] = min(best[mode], float(out.split()[-1]))
    return best["plain"], best["cpu-rehearsal"]


def per_batch_cost(workdir: Path, rounds: int = 3) -> tuple[float, float]:
    """CPU seconds per batch of a bare loader loop, (plain, with the probe): the best of `rounds`
    alternating runs of each."""
    script = workdir / "loader_only.py"
    script.write_text(LOADER_ONLY)
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO))
    best = {"plain": float("inf"), "probe": float("inf")}
    for _ in range(rounds):
        for mode in best:
            out = subprocess.run([sys.executable, str(script), mode, str(workdir)], env=env, check=True,
                                 capture_output=True, text=True, timeout=600).stdout
            best[mode] = min(best[mode], float(out.split()[-1]))
    return best["plain"], best["probe"]


def run_once(script: Path, width: int, steps: int, probe: bool, workdir: Path) -> tuple[float, float]:
    """(median wall-clock step, CPU seconds per step), each the mean over the 2 ranks."""
    out = workdir / f"result-{'probe' if probe else 'plain'}-{width}.json"
    entry = ["-m", "ddplint.verify.probe", str(script)] if probe else [str(script)]
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
               *entry, str(width), str(steps), str(out)]
    env = dict(os.environ, OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="",
               DDPLINT_VERIFY_DIR=str(workdir), DDPLINT_VERIFY_MAX_STEPS=str(10 * steps),
               DDPLINT_VERIFY_EPOCH_STEPS="0", PYTHONPATH=str(REPO))
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    ranks = [json.loads(Path(f"{out}.{rank}").read_text()) for rank in (0, 1)]
    return (statistics.mean(r["median_step_s"] for r in ranks), statistics.mean(r["cpu_per_step_s"] for r in ranks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--widths", default="64,512", help="model widths (hidden layer is 4x)")
    parser.add_argument("--rehearsal-only", action="store_true",
                        help="stop after the per-batch and --cpu emulation measurements (no torchrun)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ddplint-overhead-") as tmp:
        workdir = Path(tmp)
        script = workdir / "train.py"
        script.write_text(TRAIN)
        plain_batch, probe_batch = per_batch_cost(workdir)
        added = probe_batch - plain_batch
        print(f"probe cost per batch (one process, loader only, CPU time, best of 3 x 7): {1e6 * plain_batch:.1f} us plain, "
              f"{1e6 * probe_batch:.1f} us with the probe: +{1e6 * added:.1f} us per batch\n")
        print("verify --cpu emulation, one training step (one process, CPU time, best of 3 x 7 x 100 steps):")
        for width in (int(w) for w in args.widths.split(",")):
            plain_step, rehearsed = rehearsal_cost(workdir, width)
            print(f"  width {width:>4}: {1000 * plain_step:.3f} ms plain, {1000 * rehearsed:.3f} ms rehearsed "
                  f"({_pct(plain_step, rehearsed)}, +{1e6 * (rehearsed - plain_step):.0f} us per step)")
        print()
        if args.rehearsal_only:
            return
        print("2 ranks, DDP training (median step within a run, best run of each side):")
        print(f"{'width':>6} {'plain ms/step':>14} {'probe ms/step':>14} {'wall':>8} "
              f"{'plain CPU ms':>13} {'probe CPU ms':>13} {'CPU':>8} {'cost/step':>10}   runs")
        for width in (int(w) for w in args.widths.split(",")):
            plain, probed = [], []
            for _ in range(args.repeats):  # alternate, so that load changes hit both sides alike
                plain.append(run_once(script, width, args.steps, False, workdir))
                probed.append(run_once(script, width, args.steps, True, workdir))
            # The best run is the one least disturbed by other work on the machine.
            wall_p, wall_q = (min(w for w, _ in runs) for runs in (plain, probed))
            cpu_p, cpu_q = (min(c for _, c in runs) for runs in (plain, probed))
            print(f"{width:>6} {1000 * wall_p:>14.3f} {1000 * wall_q:>14.3f} {_pct(wall_p, wall_q):>8} "
                  f"{1000 * cpu_p:>13.3f} {1000 * cpu_q:>13.3f} {_pct(cpu_p, cpu_q):>8} "
                  f"{100 * added / wall_p:>8.1f} %   {args.repeats} x 2", flush=True)
        print("\ncost/step: the probe's per-batch cost as a share of the plain step, the overhead a quiet "
              "machine would show; wall and CPU are the measured differences, noisy on a loaded one.")


def _pct(base: float, probed: float) -> str:
    return f"{100 * (probed - base) / base:+.1f} %"


if __name__ == "__main__":
    main()
