"""Positions of just the nodes a file's findings and fixes name.

libcst's `PositionProvider` records a range for every node of the module while tracking line and
column on every token: about half of an analysis of a 1,000-line script that has a finding (the
LSP re-runs it on every edit). `positions_of` runs libcst's plain code generation with a state
that only notes where the wanted nodes start and end (honouring the statement nodes' syntactic
start / end, as PositionProvider does) and converts those token indices to rows and columns once.

It builds on libcst's code generation state, which is not public API: any failure falls back to
`PositionProvider`, and tests/test_positions.py checks, for every node of the corpus, that both
give the same ranges, so a libcst release that changes the codegen fails CI instead of moving
findings.
"""

from __future__ import annotations

import bisect
from contextlib import contextmanager
from typing import Iterable, Iterator, Mapping

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from ddplint.source import line_starts

try:
    from libcst._nodes.internal import CodegenState

    _TARGETED = True
except ImportError:  # pragma: no cover - a libcst without it: always the public provider
    CodegenState = object  # type: ignore[misc,assignment]
    _TARGETED = False


def positions_of(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> Mapping[cst.CSTNode, CodeRange]:
    """Ranges (as PositionProvider gives them) for at least `nodes`."""
    wanted = set(nodes)
    if _TARGETED:
        try:
            found = targeted_positions(module, wanted)
            if all(node in found for node in wanted):
                return found
        except Exception:  # any trouble in the private path: use the public one
            pass
    return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


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
    starts = line_starts(text)

    def position(offset: int) -> CodePosition:
        row = bisect.bisect_right(starts, offset) - 1
        return CodePosition(row + 1, offset - starts[row])

    return {node: CodeRange(position(offsets[s]), position(offsets[e])) for node, (s, e) in spans.items()}
