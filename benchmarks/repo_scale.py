"""ddplint at repository scale, against its peers, in one run on the same files.

    python benchmarks/repo_scale.py [--source DIR] [--repeat N] [--skip-slow-peers]

By default the files are the installed torch package's Python sources (about 2,300 files and 1.2
million lines), copied to a temporary folder so that no tool sees a cache or a config of the
original. Each tool runs as a subprocess; wall time is the median of --repeat runs and memory is the
peak resident set of the whole process tree (workers included), sampled from /proc.

Rows: ddplint cold (empty cache), ddplint warm (second run, same cache), ddplint single process,
`ruff check --select ALL --no-cache`, and where installed `torchfix --select ALL` and `fixit lint`
(both libcst-based; they take minutes, so --skip-slow-peers leaves them out).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Optional


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="folder of Python files (default: the installed torch package)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool; the median is reported (default 3)")
    parser.add_argument("--skip-slow-peers", action="store_true", help="leave out torchfix and fixit")
    args = parser.parse_args()
    source = args.source or _torch_package()
    with tempfile.TemporaryDirectory(prefix="ddplint-bench-") as scratch:
        files = Path(scratch) / "src"
        count, lines = _copy_python_files(source, files)
        print(f"files: {count:,} Python files, {lines:,} lines, copied from {source}")
        print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}\n")
        rows = _measure_all(files, Path(scratch), args)
    _print_table(rows)
    return 0


def _torch_package() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torch is not installed here: pass --source DIR")
    return Path(list(spec.submodule_search_locations)[0])


def _copy_python_files(source: Path, target: Path) -> tuple[int, int]:
    count = lines = 0
    for path in source.rglob("*.py"):
        destination = target / path.relative_to(source.parent)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
        count += 1
        with open(path, "rb") as handle:
            lines += sum(1 for _ in handle)
    return count, lines


def _measure_all(files: Path, scratch: Path, args) -> list[tuple[str, float, int, str]]:
    ddplint = [sys.executable, "-m", "ddplint", "check", str(files), "--exit-zero", "-q"]
    rows = []
    cache = scratch / "ddplint-cache"

    def cold():
        shutil.rmtree(cache, ignore_errors=True)
        return ddplint + ["--cache-dir", str(cache)]

    rows.append(_row("ddplint (cold, all cores)", cold, args.repeat))
    rows.append(_row("ddplint (warm cache)", lambda: ddplint + ["--cache-dir", str(cache)], args.repeat))
    rows.append(_row("ddplint (cold, --jobs 1)", lambda: ddplint + ["--no-cache", "--jobs", "1"], 1))
    ruff = _tool("ruff")
    if ruff:
        rows.append(_row("ruff check --select ALL --no-cache", lambda: [ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", str(files)], args.repeat))
    if not args.skip_slow_peers:
        torchfix = _tool("torchfix")
        if torchfix:
            rows.append(_row("torchfix --select ALL", lambda: [torchfix, "--select", "ALL", str(files)], 1))
        fixit = _tool("fixit")
        if fixit:
            rows.append(_row("fixit lint", lambda: [fixit, "lint", str(files)], 1))
    return rows


def _tool(name: str) -> Optional[str]:
    beside_python = Path(sys.executable).parent / name
    return str(beside_python) if beside_python.exists() else shutil.which(name)


def _row(label: str, command, repeat: int) -> tuple[str, float, int, str]:
    times, peaks, note = [], [], ""
    for _ in range(max(1, repeat)):
        elapsed, peak, code = _run(command())
        times.append(elapsed)
        peaks.append(peak)
        if code not in (0, 1):
            note = f"exit {code}"
    print(f"  measured {label}: {statistics.median(times):.2f} s", flush=True)
    return label, statistics.median(times), max(peaks), note


def _run(command: list[str]) -> tuple[float, int, int]:
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sampler = _TreeMemorySampler(process.pid)
    sampler.start()
    code = process.wait()
    elapsed = time.perf_counter() - start
    sampler.stop()
    return elapsed, sampler.peak_bytes, code


class _TreeMemorySampler(threading.Thread):
    """Peak of the summed resident memory of a process and all its descendants (Linux /proc)."""

    def __init__(self, root: int, interval: float = 0.02):
        super().__init__(daemon=True)
        self.root, self.interval, self.peak_bytes = root, interval, 0
        self._done = threading.Event()

    def run(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._done.is_set():
            total = sum(_resident_pages(pid) for pid in _tree(self.root)) * page
            self.peak_bytes = max(self.peak_bytes, total)
            self._done.wait(self.interval)

    def stop(self) -> None:
        self._done.set()
        self.join()


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    parent = int(handle.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, ()))
    return found


def _resident_pages(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _print_table(rows: list[tuple[str, float, int, str]]) -> None:
    reference = next((seconds for label, seconds, _, _ in rows if label.startswith("ruff")), None)
    print("\n| tool | wall time | vs ruff | peak memory (process tree) |")
    print("|---|---:|---:|---:|")
    for label, seconds, peak, note in rows:
        ratio = f"{seconds / reference:.2f}x" if reference else "n/a"
        memory = f"{peak / 2**20:.0f} MB" if peak else "n/a"
        print(f"| {label}{' (' + note + ')' if note else ''} | {seconds:.2f} s | {ratio} | {memory} |")


if __name__ == "__main__":
    sys.exit(main())
