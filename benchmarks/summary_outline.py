"""Does every module's outline name each function and class its summary records?

    python benchmarks/summary_outline.py [--root /work/eco-all] [--jobs N]

The project index builds a module's summary only for a name its outline holds (names read with
CPython's `ast`, `summaries.offerable_names`, no libcst): a recorded name the outline left out
would change what the files importing it are checked for. For every Python module under each
repository of the root (the ecosystem checkouts), the full summary is worked out with libcst and
compared with the outline before and after that narrowing (tests/outline_support.py, shared with
tests/test_summary_outline.py). Prints, per repository and in all: the modules read, those with
a summary that records something, the names recorded, the names the outline held for those
modules before the narrowing and after it, and the misses (a recorded name the outline held
before and not after; each listed). Exit 1 if any name is missed.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from multiprocessing import Pool
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from outline_support import OutlineComparison, compare_outline  # (tests/)


def _compare(path: str) -> tuple[str, Optional[OutlineComparison]]:
    return path, compare_outline(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path("/work/eco-all"))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    repositories = sorted(p for p in args.root.iterdir() if p.is_dir())
    files = [str(f) for repo in repositories for f in sorted(repo.rglob("*.py")) if f.is_file()]
    totals: Counter = Counter()
    per_repo: dict[str, Counter] = {}
    missed: list[tuple[str, list[str]]] = []
    with Pool(args.jobs) as pool:
        for path, comparison in pool.imap_unordered(_compare, files, chunksize=8):
            repo = Path(path).relative_to(args.root).parts[0]
            counts = per_repo.setdefault(repo, Counter())
            counts["modules"] += 1
            if comparison is not None:
                counts["summarised"] += 1
                counts["recorded"] += len(comparison.recorded)
                counts["asked"] += len(comparison.asked) if comparison.asked is not None else 0
                counts["outlined"] += len(comparison.outlined) if comparison.outlined is not None else 0
                counts["missed"] += len(comparison.misses)
                if comparison.misses:
                    missed.append((path, comparison.misses))
    print(f"{'repository':50} {'modules':>8} {'summarised':>10} {'recorded':>9} {'before':>7} {'outlined':>9} {'missed':>7}")
    for repo in sorted(per_repo):
        c = per_repo[repo]
        totals.update(c)
        print(f"{repo:50} {c['modules']:8} {c['summarised']:10} {c['recorded']:9} {c['asked']:7} {c['outlined']:9} {c['missed']:7}")
    print(f"{'total (' + str(len(per_repo)) + ' repositories)':50} {totals['modules']:8} {totals['summarised']:10} "
          f"{totals['recorded']:9} {totals['asked']:7} {totals['outlined']:9} {totals['missed']:7}")
    for path, misses in missed:
        print(f"MISSED {path}: {', '.join(misses)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
