"""Where a warm run's time goes, in process: CPU time of each step `ddplint check .` takes in the
current folder, with every file's result already in the cache (run `ddplint check .` once first).

    cd FOLDER && python /path/to/benchmarks/warm_phases.py [--rounds 7]

The steps are api.lint_paths' own: finding the files (discovery, with the configuration's
excludes and the ignore files), listing the project's modules (project_modules), building the
project index, opening the cache, and the cache look-ups of every file (run_checks); the
imports of the command line before them, once. Medians over --rounds. Run it with another
checkout first on PYTHONPATH to compare builds (one without discovery.Listings walks twice).
"""

from __future__ import annotations

import argparse
import statistics
import time

STARTED = time.process_time()
from ddplint.cli import _open_cache, build_parser  # noqa: E402  (the imports are measured)
from ddplint.config import Overrides, Resolver  # noqa: E402
from ddplint.discovery import discover, project_modules  # noqa: E402
from ddplint.rules import select_codes  # noqa: E402
from ddplint.runner import run_checks  # noqa: E402

IMPORTS = time.process_time() - STARTED


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    from ddplint.analysis.project import ProjectIndex
    from ddplint.runner import _holding_tree, _parses_safely

    try:
        from ddplint.discovery import Listings
    except ImportError:  # a build before the shared listings
        Listings = None
    steps: dict[str, list[float]] = {}
    clock = [time.process_time()]

    def lap(name: str) -> None:
        now = time.process_time()
        steps.setdefault(name, []).append((now - clock[0]) * 1000)
        clock[0] = now

    for _ in range(rounds):
        args = build_parser().parse_args(["check", "-q", "."])
        resolver = Resolver(Overrides(None, (), (), None, ()), None, False)
        shared = (Listings(),) if Listings is not None else ()
        clock[0] = time.process_time()
        found = list(discover(["."], resolver.is_excluded, False, args.respect_gitignore, *shared))
        lap("discover")
        modules = project_modules([path for path, problem in found if problem is None], *shared)
        lap("project_modules")
        project = ProjectIndex(modules, _parses_safely, _holding_tree)
        lap("ProjectIndex")
        cache = _open_cache(args)
        store = cache.summary_store()
        project.use_store(store)
        lap("open the cache")
        found_now = list(run_checks(found, select_codes(), resolver.codes_for, resolver.options_for, cache, project, None, []))
        lap("run_checks (cache look-ups)")
        store.close()
    print(f"{len(found)} files, {len(modules)} project module paths, {len(found_now)} findings; medians of {rounds} rounds, CPU ms")
    print(f"  {'imports of the command line (once)':36s} {IMPORTS * 1000:7.1f}")
    for name, values in steps.items():
        print(f"  {name:36s} {statistics.median(values):7.1f}")
    print(f"  {'all of these':36s} {IMPORTS * 1000 + sum(statistics.median(v) for v in steps.values()):7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
