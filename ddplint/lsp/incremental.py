"""Parse only the top-level statements an edit touched.

In an editor a change touches one statement of a long script; libcst's parse of the whole file is
the largest part of an analysis. So the worker keeps the parsed trees of top-level statements,
keyed by their exact text (with the comments and empty lines that follow them), and a new text is
parsed statement by statement, reusing every statement it has seen before. The statements are
joined into one `Module` that generates exactly the text (libcst nodes are immutable, so the new
module can share them), and the rest of the analysis runs as on a fresh parse.

Where joining could differ from parsing the whole text (indentation that differs between
statements, `\\r` line breaks, a statement that does not parse on its own), the whole text is
parsed as usual. tests/test_lsp_incremental.py checks over random edit histories that the
findings equal those of a fresh analysis.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Mapping, Optional

import libcst as cst
from libcst.metadata import CodePosition, CodeRange

from ddplint.analysis.facts import StatementFacts
from ddplint.analysis.syntax import parse_module
from ddplint.positions import positions_of
from ddplint.recovery import top_level_statement_starts
from ddplint.screen import Unparsable, compile_by_statement, compile_screen

# Source bytes of the statements kept, least recently met out first: a tree costs ~40 bytes per
# byte of source, so this bounds the worker's trees to ~80 MB (thirty 1,500-line scripts), while
# the versions a long edit session leaves behind fall out.
MAX_KEPT_BYTES = 2_000_000
# Statements whose names the screen keeps (a few kB each); past this, the older half goes.
MAX_COMPILED_STATEMENTS = 4096


@dataclass
class _Piece:
    """A top-level statement (with the comments and empty lines after it), parsed alone."""

    module: cst.Module
    node_ids: Optional[set[int]] = None  # every node in it, computed when a finding needs it
    ranges: dict = field(default_factory=dict)  # node -> range within the piece, once asked for

    def holds(self, node: cst.CSTNode) -> bool:
        if self.node_ids is None:
            self.node_ids = _node_ids(self.module)
        return id(node) in self.node_ids

    def positions(self, nodes: Iterable[cst.CSTNode]) -> Mapping[cst.CSTNode, CodeRange]:
        missing = [node for node in nodes if node not in self.ranges]
        if missing:
            self.ranges.update(positions_of(self.module, missing))
        return self.ranges


@dataclass
class _Joined:
    """How the last module was put together: where each piece starts, and which first statements
    were copied to carry the previous piece's trailing lines (copy -> original)."""

    module: cst.Module
    pieces: list[tuple[int, _Piece]]  # (0-based first line, piece)
    originals: dict[int, cst.CSTNode] = field(default_factory=dict)


class StatementParser:
    """`parse(data)` is `analysis.syntax.parse_module(data)`, reusing statements parsed before;
    `positions(module, nodes)` is `positions.positions_of`, generating code only for the
    statements that hold the nodes."""

    def __init__(self, max_kept_bytes: int = MAX_KEPT_BYTES):
        self._kept: OrderedDict[bytes, _Piece] = OrderedDict()
        self._kept_bytes = 0
        self._max_kept_bytes = max_kept_bytes
        self._last: Optional[_Joined] = None
        self._last_starts: Optional[tuple[list[bytes], list[int]]] = None  # the last text's lines, their starts
        self._last_split: Optional[tuple[bytes, list[tuple[int, bytes]]]] = None
        self._compiled: dict[tuple[bytes, int], frozenset[str]] = {}  # (statement, __future__ flags) -> its names
        # The facts of top-level functions and classes, reused while their nodes are (engine).
        self.statement_facts: Optional[StatementFacts] = StatementFacts()
        self.reused = 0  # statements taken from earlier parses, for the benchmark and the tests
        self.parsed = 0

    def screen(self, data: bytes, filename: str) -> tuple[Optional[Unparsable], frozenset[str]]:
        """`screen.compile_screen(data)`, compiling only the statements not met before."""
        pieces = self._split(data)
        if pieces is None:
            return compile_screen(data, filename)
        found = compile_by_statement(data, [text for _, text in pieces], filename, self._compiled)
        if len(self._compiled) > MAX_COMPILED_STATEMENTS:
            for text in list(self._compiled)[: len(self._compiled) // 2]:  # the oldest half
                del self._compiled[text]
        return found

    def parse(self, data: bytes) -> cst.Module:
        self._last = self._parse_by_statement(data)
        return self._last.module if self._last is not None else parse_module(data)

    def positions(self, module: cst.Module, nodes: Iterable[cst.CSTNode]) -> Mapping[cst.CSTNode, CodeRange]:
        wanted = list(dict.fromkeys(nodes))
        joined = self._last
        if joined is None or joined.module is not module:
            return positions_of(module, wanted)
        found: dict[cst.CSTNode, CodeRange] = {}
        remaining = {node: joined.originals.get(id(node), node) for node in wanted}
        # A node lies in one piece only. Pieces whose nodes are known already are asked first: a
        # finding usually stays in an unchanged statement, and then the edited one is never walked.
        for first_line, piece in sorted(joined.pieces, key=lambda placed: placed[1].node_ids is None):
            if not remaining:
                break
            mine = {node: original for node, original in remaining.items() if piece.holds(original)}
            if not mine:
                continue
            ranges = piece.positions(mine.values())
            for node, original in mine.items():
                found[node] = _shifted(ranges[original], first_line)
                del remaining[node]
        if len(found) < len(wanted):  # a node outside every piece (never expected): the whole module
            return positions_of(module, wanted)
        return found

    def _split(self, data: bytes) -> Optional[list[tuple[int, bytes]]]:
        """(0-based first line, text) of each top-level statement of `data`, or None where the
        text is not split (`\r` line breaks, fewer than two statements). The screen and the
        parse of one analysis ask for the same text: the second gets the first's answer."""
        if self._last_split is not None and self._last_split[0] == data:
            return self._last_split[1]
        if b"\r" in data:
            return None
        lines = data.splitlines(keepends=True)
        starts = self.statement_starts(lines)
        if len(starts) < 2:
            return None
        bounds = zip([0] + starts[1:], starts[1:] + [len(lines)])
        pieces = [(first, b"".join(lines[first:end])) for first, end in bounds]
        self._last_split = (data, pieces)
        return pieces

    def _parse_by_statement(self, data: bytes) -> Optional[_Joined]:
        split = self._split(data)
        if split is None:
            return None
        seen: set[bytes] = set()
        pieces: list[tuple[int, _Piece]] = []
        for first, text in split:
            piece = self._piece(text, fresh=text in seen)
            if piece is None:
                return None
            seen.add(text)
            pieces.append((first, piece))
        return _join(pieces)

    def statement_starts(self, lines: list[bytes]) -> list[int]:
        """`recovery.top_level_statement_starts(lines)`, scanning only the lines around what
        changed since the last text: the scan (brackets, strings, comments) restarts from
        nothing at every statement start, so the starts before the statement the change begins
        in, and after the first start past its end that is still one, are the old ones."""
        last, self._last_starts = self._last_starts, None
        starts = _rescanned(last, lines) if last is not None else None
        if starts is None:
            starts = top_level_statement_starts(lines)
        self._last_starts = (lines, starts)
        return starts

    def _piece(self, text: bytes, fresh: bool) -> Optional[_Piece]:
        """The parsed piece; `fresh` for a piece met twice in one text: nodes are told apart by
        identity, so a repeated statement gets its own tree."""
        kept = None if fresh else self._kept.get(text)
        if kept is not None:
            self._kept.move_to_end(text)
            self.reused += 1
            return kept
        try:
            piece = _Piece(parse_module(text, keep=False))
        except Exception:  # a statement that does not parse alone: the whole text decides
            return None
        self.parsed += 1
        if not fresh:
            self._kept[text] = piece
            self._kept_bytes += len(text)
            while self._kept_bytes > self._max_kept_bytes and len(self._kept) > 1:
                self._kept_bytes -= len(self._kept.popitem(last=False)[0])
        return piece


def _rescanned(last: tuple[list[bytes], list[int]], lines: list[bytes]) -> Optional[list[int]]:
    """The statement starts of `lines` from those of the last text, or None where the scan of
    the changed part cannot vouch for the old starts after it."""
    old_lines, old_starts = last
    if not old_starts or old_starts[0] != 0:
        return None
    if len(old_lines) == len(lines):
        return _rescanned_in_place(old_lines, old_starts, lines)
    shortest = min(len(old_lines), len(lines))
    same_before = 0
    while same_before < shortest and old_lines[same_before] == lines[same_before]:
        same_before += 1
    same_after = 0
    while same_after < shortest - same_before and old_lines[-1 - same_after] == lines[-1 - same_after]:
        same_after += 1
    # From the start of the statement holding the first changed line, to the first old start at
    # or past the last changed line (where the scan must find a start again)...
    first = old_starts[bisect.bisect_right(old_starts, same_before) - 1]
    after = bisect.bisect_left(old_starts, len(old_lines) - same_after)
    shift = len(lines) - len(old_lines)
    if after == len(old_starts):  # ...or to the end of the file
        return old_starts[: bisect.bisect_right(old_starts, first) - 1] + [
            first + start for start in top_level_statement_starts(lines[first:])
        ]
    resumes = old_starts[after] + shift
    window = [first + start for start in top_level_statement_starts(lines[first : resumes + 1])]
    if resumes not in window:
        return None  # the change opened a bracket or a string, or ends in a decorator: scan it all
    return old_starts[: bisect.bisect_right(old_starts, first) - 1] + window[:-1] + [
        start + shift for start in old_starts[after:]
    ]


def _rescanned_in_place(old_lines: list[bytes], old_starts: list[int], lines: list[bytes]) -> Optional[list[int]]:
    """`_rescanned` where no line was added or removed (an edit within lines, or several: the
    language server gets whole texts, and an edit after an undo changes two places). Each run of
    statements holding a changed line is scanned again, up to the next old start, which the scan
    must find again."""
    changed = [row for row, (old, new) in enumerate(zip(old_lines, lines)) if old != new]
    runs: list[list[int]] = []  # [first, last] statement (index into old_starts) of each run
    for row in changed:
        statement = bisect.bisect_right(old_starts, row) - 1
        if runs and statement <= runs[-1][1] + 1:
            runs[-1][1] = statement
        else:
            runs.append([statement, statement])
    starts: list[int] = []
    kept_from = 0  # the first old statement not yet copied or scanned again
    for first, last in runs:
        starts += old_starts[kept_from:first]
        begin = old_starts[first]
        if last + 1 == len(old_starts):
            return starts + [begin + start for start in top_level_statement_starts(lines[begin:])]
        resumes = old_starts[last + 1]
        window = [begin + start for start in top_level_statement_starts(lines[begin : resumes + 1])]
        if resumes not in window:
            return None
        starts += window[:-1]
        kept_from = last + 1
    return starts + old_starts[kept_from:]


def _join(pieces: list[tuple[int, _Piece]]) -> Optional[_Joined]:
    """One module from pieces parsed apart: each piece's trailing comments and empty lines (its
    footer) lead the next piece's first statement, as a parse of the whole text places them."""
    parts = [piece.module for _, piece in pieces]
    indents = {part.default_indent for part in parts if _has_indented_block(part)}
    if len(indents) > 1 or any(part.header for part in parts[1:]) or any(not part.body for part in parts[1:]):
        return None
    body: list[cst.BaseStatement] = list(parts[0].body)
    originals: dict[int, cst.CSTNode] = {}
    carried = parts[0].footer
    for part in parts[1:]:
        first, *rest = part.body
        if carried:
            copy = first.with_changes(leading_lines=(*carried, *first.leading_lines))
            originals[id(copy)] = first
            first = copy
        body.append(first)
        body.extend(rest)
        carried = part.footer
    module = parts[0].with_changes(
        body=body,
        footer=carried,
        default_indent=indents.pop() if indents else parts[0].default_indent,
        has_trailing_newline=parts[-1].has_trailing_newline,
    )
    return _Joined(module, pieces, originals)


def _has_indented_block(part: cst.Module) -> bool:
    return any(isinstance(getattr(statement, "body", None), cst.IndentedBlock) for statement in part.body)


def _node_ids(root: cst.CSTNode) -> set[int]:
    """Every node under `root` but whitespace and comments (no finding names those; if one ever
    did, `positions` would fall back to the whole module)."""
    ids: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        ids.add(id(node))
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                stack.append(value)
            elif isinstance(value, (list, tuple)):
                stack.extend(item for item in value if isinstance(item, cst.CSTNode))
    return ids


@lru_cache(maxsize=None)
def _child_fields(node_type: type) -> tuple[str, ...]:
    return tuple(
        f.name for f in dataclasses.fields(node_type) if not _LAYOUT_FIELD.search(f.name)
    ) if dataclasses.is_dataclass(node_type) else ()


_LAYOUT_FIELD = re.compile(r"whitespace|leading_lines|lines_after_decorators|^header$|^footer$")


def _shifted(where: CodeRange, lines: int) -> CodeRange:
    return CodeRange(
        CodePosition(where.start.line + lines, where.start.column), CodePosition(where.end.line + lines, where.end.column)
    )
