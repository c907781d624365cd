"""The engine's positions (ddplint/positions.py: PositionProvider's ranges for just the nodes that
findings and fixes name, at the cost of one plain codegen pass), checked and measured here.

`engine._locate` resolves libcst's `PositionProvider`, which records a CodeRange for every node
of the module while tracking line and column on every token: about 40 % of an analysis of a
1,000-line script (see README.md, "LSP latency"). `targeted_positions` runs the same codegen
with a state that only notes token indices where the wanted nodes start and end (honouring the
statement nodes' syntactic start / end hoisting, as PositionProvider does), then turns those
indices into rows and columns once.

    python benchmarks/targeted_positions.py     # equivalence over the case files, then timings

checks that, for every node of every case file (tests/corpus, tests/rules/*/cases), the result
equals PositionProvider's.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ddplint.positions import targeted_positions


# -- check and measure -------------------------------------------------------------------------
class _AllNodes(cst.CSTVisitor):
    def __init__(self):
        self.nodes = []

    def on_visit(self, node):
        self.nodes.append(node)
        return True


def _all_nodes(module):
    visitor = _AllNodes()
    module.visit(visitor)
    return visitor.nodes


def _best_ms(step, runs=3):
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> int:
    repo = Path(__file__).resolve().parents[1]
    cases = [*repo.glob("tests/corpus/*/*.py"), *repo.glob("tests/rules/*/cases/*/*.py")]  # tests/case_files.py
    files = sorted(cases) + sorted(repo.glob("examples/*.py"))
    mismatches = 0
    for path in files:
        module = cst.parse_module(path.read_bytes())
        reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        nodes = _all_nodes(module)
        mine = targeted_positions(module, nodes)
        mismatches += sum(1 for node in nodes if reference[node] != mine[node])
    print(f"{len(files)} files, every node: {mismatches} ranges differ from PositionProvider's")
    sys.path.insert(0, str(repo / "benchmarks"))
    from train_script import training_script

    module = cst.parse_module(training_script(1000))
    loops = [node for node in _all_nodes(module) if isinstance(node, cst.For)][:3]
    full = _best_ms(lambda: MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))
    targeted = _best_ms(lambda: targeted_positions(module, loops))
    print(f"1,000-line script: PositionProvider {full:.0f} ms, targeted_positions (3 nodes) {targeted:.0f} ms")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
