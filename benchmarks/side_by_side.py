"""Two ddplint checkouts and ruff, started together on the same files; CPU time of each process.

    python benchmarks/side_by_side.py --before /path/to/other/checkout [--source DIR]

On a shared machine the load moves between runs taken one after another; started together, the
three see the same load. Each ddplint runs single-process (`--jobs 1 --no-cache`), so its CPU time
(from `wait4`) is the whole cost of its analysis. The default files are the installed torch
package's, used in place: nothing is written there.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the checkout to compare this one with")
    parser.add_argument("--source", type=Path, help="folder of Python files (default: the installed torch package)")
    args = parser.parse_args()
    source = args.source or _torch_package()
    here = Path(__file__).resolve().parent.parent
    lint = [sys.executable, "-m", "ddplint", "check", str(source), "--no-cache", "--jobs", "1", "--exit-zero", "-q"]
    commands = {"ddplint before": (lint, args.before.resolve()), "ddplint after": (lint, here)}
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    commands["ruff check --select ALL --no-cache"] = ([ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", str(source)], here)
    print(f"files: {source}; load at start: {_load()}")
    results = _race(commands)
    ruff_cpu = results.get("ruff check --select ALL --no-cache", (0.0, 0.0))[1] or float("nan")
    print("\n| tool | wall time | CPU time | CPU vs ruff |\n|---|---:|---:|---:|")
    for label, (wall, cpu) in results.items():
        print(f"| {label} | {wall:.1f} s | {cpu:.2f} s | {cpu / ruff_cpu:.1f}x |")
    return 0


def _race(commands: dict) -> dict[str, tuple[float, float]]:
    start = time.perf_counter()
    running = {}
    for label, (command, checkout) in commands.items():
        env = dict(os.environ, PYTHONPATH=str(checkout))
        process = subprocess.Popen(command, cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        running[process.pid] = label
    results = {}
    while running:
        pid, _, usage = os.wait4(-1, 0)
        if pid in running:
            label = running.pop(pid)
            results[label] = (time.perf_counter() - start, usage.ru_utime + usage.ru_stime)
            print(f"  {label}: done, load {_load()}", flush=True)
    return {label: results[label] for label in commands}


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "n/a"


def _torch_package() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torch is not installed here: pass --source DIR")
    return Path(list(spec.submodule_search_locations)[0])


if __name__ == "__main__":
    sys.exit(main())
