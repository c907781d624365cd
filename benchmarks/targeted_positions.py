"""A proposal for the engine, measured here: PositionProvider's ranges for just the nodes that
findings and fixes name, at the cost of one plain codegen pass.

`engine._locate` resolves libcst's `PositionProvider`, which records a CodeRange for every node
of the module while tracking line and column on every token: about 40 % of an analysis of a
1,000-line script (see README.md, "LSP latency"). `targeted_positions` runs the same codegen
with a state that only notes token indices where the wanted nodes start and end (honouring the
statement nodes' syntactic start / end hoisting, as PositionProvider does), then turns those
indices into rows and columns once.

    python benchmarks/targeted_positions.py     # equivalence over the corpus, then timings

checks that, for every node of every corpus file, the result equals PositionProvider's.
"""

from __future__ import annotations

import bisect
import re
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

_NEWLINE = re.compile(r"\r\n?|\n")  # libcst's own line breaks


class _TargetedCodegenState(CodegenState):
    """Plain codegen that notes token indices where wanted nodes start and end."""

    def __init__(self, module: cst.Module, wanted: set):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = wanted
        self.inclusive: dict = {}
        self.syntactic: dict = {}
        self._open: list = []

    def before_codegen(self, node) -> None:
        if node in self.wanted:
            self._open.append((node, len(self.tokens)))

    def after_codegen(self, node) -> None:
        if self._open and self._open[-1][0] is node:
            _, start = self._open.pop()
            self.inclusive[node] = (start, len(self.tokens))

    @contextmanager
    def record_syntactic_position(self, node, *, start_node=None, end_node=None) -> Iterator[None]:
        if node not in self.wanted:
            yield
            return
        for child in (start_node, end_node):
            if child is not None:
                self.wanted.add(child)  # hoisted from a child: locate the child too
        start = len(self.tokens)
        try:
            yield
        finally:
            end = len(self.tokens)
            if start_node is not None:
                start = self._span(start_node)[0]
            if end_node is not None:
                end = self._span(end_node)[1]
            self.syntactic[node] = (start, end)

    def _span(self, node):
        return self.syntactic.get(node) or self.inclusive[node]


def targeted_positions(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict:
    state = _TargetedCodegenState(module, set(nodes))
    module._codegen(state)
    spans = {node: state.syntactic.get(node) or state.inclusive[node] for node in state.inclusive}
    spans.update(state.syntactic)
    # token index -> text offset -> (line, column)
    indices = sorted({i for span in spans.values() for i in span})
    offsets, total, previous = {}, 0, 0
    tokens = state.tokens
    for index in indices:
        total += sum(len(t) for t in tokens[previous:index])
        offsets[index] = total
        previous = index
    text = "".join(tokens)
    line_starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def position(offset: int) -> CodePosition:
        row = bisect.bisect_right(line_starts, offset) - 1
        return CodePosition(row + 1, offset - line_starts[row])

    return {node: CodeRange(position(offsets[s]), position(offsets[e])) for node, (s, e) in spans.items()}


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
    files = sorted(repo.glob("tests/corpus/*/*.py")) + sorted(repo.glob("examples/*.py"))
    mismatches = 0
    for path in files:
        module = cst.parse_module(path.read_bytes())
        reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        nodes = _all_nodes(module)
        mine = targeted_positions(module, nodes)
        mismatches += sum(1 for node in nodes if reference[node] != mine[node])
    print(f"{len(files)} files, every node: {mismatches} ranges differ from PositionProvider's")
    sys.path.insert(0, str(repo / "benchmarks"))
    from lsp_latency import training_script

    module = cst.parse_module(training_script(1000))
    loops = [node for node in _all_nodes(module) if isinstance(node, cst.For)][:3]
    full = _best_ms(lambda: MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))
    targeted = _best_ms(lambda: targeted_positions(module, loops))
    print(f"1,000-line script: PositionProvider {full:.0f} ms, targeted_positions (3 nodes) {targeted:.0f} ms")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
