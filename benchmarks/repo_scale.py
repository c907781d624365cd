"""ddplint at repository scale, against its peers, in one run on the same files.

    python benchmarks/repo_scale.py [--source DIR] [--repeat N] [--skip-slow-peers] [--only torch|pre-commit]

By default the files are the installed torch package's Python sources (about 2,300 files and 1.2
million lines), copied to a temporary folder so that no tool sees a cache or a config of the
original. Each tool runs as a subprocess; wall time is the median of --repeat runs and memory is the
peak of the whole process tree (workers included), sampled from /proc two ways: the sum of the
processes' resident sets, and the sum of their proportional sets (PSS: pages the forked workers
share with the main process counted once).

Rows: ddplint cold (empty cache), ddplint warm (second run, same cache), ddplint single process,
`ruff check --select ALL --no-cache`, and where installed `torchfix --select ALL` and `fixit lint`
(both libcst-based; they take minutes, so --skip-slow-peers leaves them out). CPU time (user +
system of the whole tree) is printed too: on a shared machine it moves less than wall time.

Then pre-commit's case: a generated 1,000-file repository (benchmarks/train_script.py makes its
five distributed files: a trainer, a train script, distributed utils, checkpoint utils and data
iterators; the rest are small model and utility modules), where a commit changed those five files
and pre-commit passes just them, as the ddplint hook does (`--force-exclude`), cold and warm, next to
ruff on the same five files.

ddplint's modules are compiled to bytecode first, as installing a package does (this environment
sets PYTHONDONTWRITEBYTECODE, which would otherwise make every run compile them again).
"""

from __future__ import annotations

import argparse
import os
import resource
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
    parser.add_argument("--skip-single", action="store_true", help="leave out ddplint --jobs 1 on the whole package")
    parser.add_argument("--only", choices=("torch", "pre-commit"), help="measure only the package or only pre-commit's case")
    args = parser.parse_args()
    _compile_ddplint()
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; load average {_load()}\n")
    with tempfile.TemporaryDirectory(prefix="ddplint-bench-") as scratch:
        if args.only != "pre-commit":
            source = args.source or _torch_package()
            files = Path(scratch) / "src"
            count, lines = _copy_python_files(source, files)
            print(f"files: {count:,} Python files, {lines:,} lines, copied from {source}")
            _print_table(_measure_all(files, Path(scratch), args))
        if args.only != "torch":
            print("\npre-commit's case: five changed files of a 1,000-file repository")
            _print_table(_measure_pre_commit(Path(scratch) / "repo", args.repeat))
    print(f"\nload average at the end: {_load()}")
    return 0


def _compile_ddplint() -> None:
    import ddplint

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(ddplint.__file__).parent)], check=True)


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


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
    if not args.skip_single:
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


def _measure_pre_commit(repo: Path, repeat: int) -> list[tuple[str, float, float, int, str]]:
    changed = _generated_repository(repo)
    names = [str(path.relative_to(repo)) for path in changed]
    cache = repo / ".ddplint_cache"
    ddplint = [sys.executable, "-m", "ddplint", "check", "--force-exclude", "--exit-zero", "-q", *names]

    def cold():
        shutil.rmtree(cache, ignore_errors=True)
        return ddplint

    rows = [_row("ddplint, 5 files (cold)", cold, repeat, cwd=repo), _row("ddplint, 5 files (warm)", lambda: ddplint, repeat, cwd=repo)]
    ruff = _tool("ruff")
    if ruff:
        rows.append(_row("ruff check --select ALL --no-cache, 5 files", lambda: [ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", *names], repeat, cwd=repo))
    return rows


def _generated_repository(repo: Path) -> list[Path]:
    """1,000 files; returns the five a commit changed."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from train_script import training_script

    sizes = {"trainer.py": 1800, "train.py": 900, "distributed_utils.py": 400, "checkpoint_utils.py": 500, "iterators.py": 700}
    package = repo / "project"
    changed = []
    for index, (name, lines) in enumerate(sizes.items()):
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(training_script(lines, seed=index))
        changed.append(path)
    for index in range(1000 - len(sizes)):
        path = package / f"part{index // 100}" / f"module_{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_filler_module(index))
    (repo / "pyproject.toml").write_text("[tool.ddplint]\n")
    return changed


def _filler_module(index: int) -> str:
    return f'''"""Model part {index}."""

import torch
import torch.nn as nn


class Part{index}(nn.Module):
    def __init__(self, width={64 + index % 7 * 16}):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(x + torch.relu(self.proj(x)))


def build_part_{index}(config):
    return Part{index}(config.get("width", {64 + index % 7 * 16}))
'''


def _tool(name: str) -> Optional[str]:
    beside_python = Path(sys.executable).parent / name
    return str(beside_python) if beside_python.exists() else shutil.which(name)


def _row(label: str, command, repeat: int, cwd: Optional[Path] = None) -> tuple[str, float, float, tuple[int, int], str]:
    times, cpus, peaks, note = [], [], [], ""
    for _ in range(max(1, repeat)):
        elapsed, cpu, peak, code = _run(command(), cwd)
        times.append(elapsed)
        cpus.append(cpu)
        peaks.append(peak)
        if code not in (0, 1):
            note = f"exit {code}"
    print(f"  measured {label}: {statistics.median(times):.2f} s, CPU {statistics.median(cpus):.2f} s", flush=True)
    return label, statistics.median(times), statistics.median(cpus), (max(p[0] for p in peaks), max(p[1] for p in peaks)), note


def _run(command: list[str], cwd: Optional[Path] = None) -> tuple[float, float, tuple[int, int], int]:
    """(wall s, CPU s of the process and every descendant it waited for, peak tree RSS and PSS, exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    sampler = _TreeMemorySampler(process.pid)
    sampler.start()
    code = process.wait()
    elapsed = time.perf_counter() - start
    sampler.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, (sampler.peak_bytes, sampler.peak_pss_bytes), code


class _TreeMemorySampler(threading.Thread):
    """Peak of the memory of a process and all its descendants (Linux /proc), two ways: the sum
    of their resident sets (pages the workers share with the process that forked them, the
    imported code, counted once per process), and the sum of their proportional sets (PSS: a
    page shared by n processes counts 1/n in each, so the total is the memory in use)."""

    def __init__(self, root: int, interval: float = 0.02):
        super().__init__(daemon=True)
        self.root, self.interval, self.peak_bytes, self.peak_pss_bytes = root, interval, 0, 0
        self._done = threading.Event()

    def run(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._done.is_set():
            tree = _tree(self.root)
            self.peak_bytes = max(self.peak_bytes, sum(_resident_pages(pid) for pid in tree) * page)
            self.peak_pss_bytes = max(self.peak_pss_bytes, sum(_proportional_bytes(pid) for pid in tree))
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


def _proportional_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
            for line in handle:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


def _resident_pages(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _print_table(rows: list[tuple[str, float, float, tuple[int, int], str]]) -> None:
    reference = next((row for row in rows if row[0].startswith("ruff")), None)
    print("\n| tool | wall time | vs ruff | CPU time | vs ruff | peak memory, process tree: RSS sum | PSS sum |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, seconds, cpu, (peak, pss), note in rows:
        ratio = f"{seconds / reference[1]:.2f}x" if reference else "n/a"
        cpu_ratio = f"{cpu / reference[2]:.2f}x" if reference and reference[2] else "n/a"
        memory = f"{peak / 2**20:.0f} MB" if peak else "n/a"
        proportional = f"{pss / 2**20:.0f} MB" if pss else "n/a"
        print(f"| {label}{' (' + note + ')' if note else ''} | {seconds:.2f} s | {ratio} | {cpu:.2f} s | {cpu_ratio} | {memory} | {proportional} |")


if __name__ == "__main__":
    sys.exit(main())
