"""Pre-commit's case on a real repository: what keeping module summaries across runs saves.

    python benchmarks/summary_cache.py [--repeat N] [--ddplint-path DIR] [--only megatron|fairseq]

For each repository (Megatron-LM and fairseq, from the extracted copies under /work/eco-all, or
--megatron / --fairseq), its Python files are copied to a temporary folder with a pyproject.toml
at the top (no cache or config of the original is seen), and `ddplint FILES` is timed on a few
of its training files, as the pre-commit hook runs it, in three states:

- cold: `--no-cache`, nothing kept from any run;
- files edited after a run over the whole repository (`ddplint .` once, untimed): before each
  timed run the files get a new comment line, so their results are stale and they are checked
  again, reading the summaries of the modules they import from the cache;
- the same, with one module they import also edited (its summary is worked out again).

Next to `ruff check --select ALL --no-cache` on the same files. Wall time is the median of --repeat
runs; CPU time (user + system of the process and its workers) the median too. The findings of the
cached runs are compared with the cold run's: the benchmark stops if they differ.

--ddplint-path runs another checkout's ddplint (PYTHONPATH), e.g. a worktree of main for the
numbers before a change. ddplint's modules are compiled to bytecode first.
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
import time
from pathlib import Path
from typing import Optional

ECOSYSTEM = Path("/work/eco-all")
# (repository folder, the training files the hook checks, a module they import that is edited)
REPOSITORIES = {
    "megatron": (
        "NVIDIA__Megatron-LM",
        ["pretrain_gpt.py", "megatron/training/training.py", "megatron/training/initialize.py",
         "megatron/training/checkpointing.py"],
        "megatron/training/global_vars.py",
    ),
    "fairseq": (
        "facebookresearch__fairseq",
        ["fairseq/trainer.py", "fairseq_cli/train.py", "fairseq/checkpoint_utils.py", "fairseq/data/iterators.py"],
        "fairseq/distributed/utils.py",
    ),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ddplint-path", type=Path, help="checkout whose ddplint to run (default: the installed one)")
    parser.add_argument("--only", choices=sorted(REPOSITORIES))
    parser.add_argument("--megatron", type=Path)
    parser.add_argument("--fairseq", type=Path)
    args = parser.parse_args()
    environment = dict(os.environ)
    if args.ddplint_path:
        environment["PYTHONPATH"] = str(args.ddplint_path.resolve())
    _compile_ddplint(environment)
    print(f"machine: {os.cpu_count()} cores; load average {_load()}")
    for name, (folder, files, changed) in REPOSITORIES.items():
        if args.only and name != args.only:
            continue
        source = getattr(args, name) or ECOSYSTEM / folder
        if not source.is_dir():
            print(f"\n{name}: {source} not found, skipped")
            continue
        with tempfile.TemporaryDirectory(prefix="ddplint-summaries-bench-") as scratch:
            root = Path(scratch) / "repo"
            count = _copy_python_files(source, root)
            print(f"\n{name}: {len(files)} files of {count:,} ({', '.join(files)}); edited module {changed}")
            _print_rows(_measure(root, files, changed, args.repeat, environment))
    print(f"\nload average at the end: {_load()}")
    return 0


def _measure(root: Path, files: list[str], changed: str, repeat: int, environment: dict) -> list[tuple]:
    ddplint = [sys.executable, "-m", "ddplint", "--exit-zero", "--output-format", "text"]
    rows = [("ruff check --select ALL --no-cache", _timed([_ruff(), "check", "--select", "ALL", "--no-cache",
                                                            "--exit-zero", *files], root, repeat, environment))]
    cold = _timed([*ddplint, "--no-cache", *files], root, repeat, environment)
    rows.append(("ddplint --no-cache (cold)", cold))
    subprocess.run([*ddplint, "."], cwd=root, env=environment, capture_output=True, check=True)  # the earlier run
    rows.append(("ddplint, files edited since `ddplint .`",
                 _timed([*ddplint, *files], root, repeat, environment, before=lambda: _edit(root, files))))
    rows.append(("ddplint, files and one imported module edited",
                 _timed([*ddplint, *files], root, repeat, environment, before=lambda: _edit(root, [*files, changed]))))
    for label, (_, _, output) in rows[2:]:
        if sorted(output) != sorted(cold[2]):
            raise SystemExit(f"{label}: findings differ from the cold run's:\n{output}\n---\n{cold[2]}")
    return rows


_EDITS = [0]


def _edit(root: Path, files: list[str]) -> None:
    """A comment line appended: new content (and stamp), the same findings."""
    _EDITS[0] += 1
    for name in files:
        with open(root / name, "a") as handle:
            handle.write(f"\n# edit {_EDITS[0]}\n")


def _timed(command: list[str], cwd: Path, repeat: int, environment: dict, before=None) -> tuple[float, float, list[str]]:
    """(median wall s, median CPU s, the findings' lines of the last run)."""
    walls, cpus, output = [], [], []
    for _ in range(repeat):
        if before is not None:
            before()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - usage.ru_utime + after.ru_stime - usage.ru_stime)
        output = [line for line in done.stdout.splitlines() if ": DDP" in line]
    return statistics.median(walls), statistics.median(cpus), output


def _print_rows(rows: list[tuple]) -> None:
    print(f"{'':50} {'wall s':>8} {'CPU s':>8} findings")
    for label, (wall, cpu, output) in rows:
        print(f"{label:50} {wall:8.2f} {cpu:8.2f} {len(output) if 'ddplint' in label else '':>8}")


def _copy_python_files(source: Path, target: Path) -> int:
    count = 0
    for path in source.rglob("*.py"):
        if path.is_symlink() or not path.is_file():
            continue
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
        count += 1
    (target / "pyproject.toml").write_text("")
    return count


def _ruff() -> str:
    found = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    return found


def _compile_ddplint(environment: dict) -> None:
    where = subprocess.run([sys.executable, "-c", "import ddplint, os; print(os.path.dirname(ddplint.__file__))"],
                           env=environment, capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([sys.executable, "-m", "compileall", "-q", where], check=True)


def _load() -> Optional[str]:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return None


if __name__ == "__main__":
    sys.exit(main())
