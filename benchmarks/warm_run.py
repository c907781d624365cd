"""A warm run over the installed torch package: ddplint a second time over the same cache, nothing
changed, next to ruff's warm run (its own cache) in the same rounds.

    python benchmarks/warm_run.py [--source DIR] [--repeat N] [--baseline DIR] [--work DIR] [--no-ruff] [--project]

The files are copied to a temporary folder (as repo_scale.py does; --work DIR keeps them and the
caches there for the next measurement), each tool runs once to fill its cache (minutes for
ddplint; skipped where --work already holds it), then --repeat rounds run each tool in turn. Wall and CPU time (user + system of the
process) are medians; the cache file's size is printed too. --baseline DIR (a folder holding
another build's `ddplint` package, e.g. from `git archive`) adds that build's warm run, with a
cache of its own, to each round: before/after on the same machine at the same load. --project
puts an empty pyproject.toml at the copy's root, as a repository has a project marker: each run
then also builds the project model from a walk of the whole tree (discovery.project_modules).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from repo_scale import _compile_ddplint, _copy_python_files, _load, _tool, _torch_package

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="folder of Python files (default: the installed torch package)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds; medians are reported (default 5)")
    parser.add_argument("--baseline", type=Path, help="folder holding another build's ddplint package")
    parser.add_argument("--work", type=Path, help="keep the copied files and the caches here, and reuse them")
    parser.add_argument("--no-ruff", action="store_true", help="ddplint only (ruff's runs load the machine between them)")
    parser.add_argument("--project", action="store_true", help="an empty pyproject.toml at the copy's root (a repository)")
    args = parser.parse_args()
    _compile_ddplint()
    if args.baseline:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(args.baseline / "ddplint")], check=True)
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; load average {_load()}")
    with tempfile.TemporaryDirectory(prefix="ddplint-warm-") as temporary:
        scratch = args.work or Path(temporary)
        files = scratch / "src"
        if not files.exists():
            count, lines = _copy_python_files(args.source or _torch_package(), files)
            print(f"files: {count:,} Python files, {lines:,} lines")
        if args.project:
            (files / "pyproject.toml").touch()
        tools = {"ddplint (this build)": _ddplint(ROOT, files, scratch / "cache")}
        if args.baseline:
            tools["ddplint (baseline)"] = _ddplint(args.baseline, files, scratch / "cache-baseline")
        ruff = None if args.no_ruff else _tool("ruff")
        if ruff:
            # ruff does not cache a file with findings (astral-sh/ruff#19869): under --select ALL
            # nearly every torch file has some, so its warm run is nearly a cold one. Its default
            # rules find little, and show its cache at work.
            for label, select in (("--select ALL", ["--select", "ALL"]), ("default rules", [])):
                tools[f"ruff check {label} (warm)"] = (
                    [ruff, "check", *select, "--exit-zero", "-q", "--cache-dir", str(scratch / f"ruff-cache{len(select)}"), str(files)],
                    {},
                )
        for name, (command, env) in tools.items():  # cold: fills the caches
            if not Path(command[command.index("--cache-dir") + 1]).exists():
                print(f"cold {name}: {_run(command, env, scratch)[0]:.1f} s")
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in tools}
        for _ in range(args.repeat):
            for name, (command, env) in tools.items():
                times[name].append(_run(command, env, scratch))
        print(f"\n| tool | wall (median of {args.repeat}) | CPU (median) |\n|---|---:|---:|")
        for name, runs in times.items():
            print(f"| {name} | {statistics.median(w for w, _ in runs):.3f} s | {statistics.median(c for _, c in runs):.3f} s |")
        for cache in sorted(scratch.glob("cache*/*/*.json")):  # ddplint's
            print(f"cache file {cache.parent.parent.name}: {cache.stat().st_size / 1e6:.2f} MB")
    print(f"load average at the end: {_load()}")
    return 0


def _ddplint(package_root: Path, files: Path, cache: Path) -> tuple[list[str], dict[str, str]]:
    command = [sys.executable, "-m", "ddplint", "check", str(files), "--exit-zero", "-q", "--cache-dir", str(cache)]
    return command, {"PYTHONPATH": str(package_root)}


def _run(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children). Not run in the repository:
    `python -m` puts the working directory first on the path (the baseline would run this build),
    and ruff would read the repository's configuration."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, env={**os.environ, **env}, cwd=cwd)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{command[0]} failed")
    return wall, usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    sys.exit(main())
