"""Open documents as the server sees them, and LSP positions.

The server keeps its own copy of every open text instead of pygls's: pygls splits lines with
`str.splitlines()`, which also breaks at form feeds, `\\x1c`-`\\x1e`, `\\x85`, `\\u2028` and
`\\u2029`, while LSP (and Python's tokenizer, and so the engine's row numbers) only know `\\n`,
`\\r\\n` and `\\r`. A form feed in a file (Emacs page breaks, much of the stdlib) would shift every
row below it.

Columns: the engine counts Unicode code points (1-based); LSP counts in the negotiated position
encoding, UTF-16 code units unless the client offers something else. Everything that crosses the
boundary goes through `to_client_column` / `from_client_column`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from lsprotocol import types

from ddplint.source import LINE_BREAK as _LINE_BREAK

UTF8, UTF16, UTF32 = (
    types.PositionEncodingKind.Utf8.value,
    types.PositionEncodingKind.Utf16.value,
    types.PositionEncodingKind.Utf32.value,
)


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their terminators, split the way LSP splits them. A text that
    ends with a line break has an empty last line, as an editor shows it."""
    return _LINE_BREAK.split(text)


def _units(text: str, encoding: str) -> int:
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", errors="surrogatepass"))
    # UTF-16: characters beyond the BMP take two code units.
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def to_client_column(line: str, column: int, encoding: str) -> int:
    """0-based code-point column in `line` -> 0-based column in the client's encoding."""
    column = max(0, min(column, len(line)))
    return column if encoding == UTF32 else _units(line[:column], encoding)


def from_client_column(line: str, column: int, encoding: str) -> int:
    """0-based column in the client's encoding -> 0-based code-point column, clamped to the line.
    A position inside a surrogate pair (or a UTF-8 sequence) rounds up to the next character."""
    if encoding == UTF32:
        return max(0, min(column, len(line)))
    units = 0
    for index, char in enumerate(line):
        if units >= column:
            return index
        units += _units(char, encoding)
    return len(line)


@dataclass(eq=False)  # identity: "is this still the document I analysed?"
class TextDocument:
    uri: str
    text: str
    version: Optional[int]
    language_id: str = "python"
    _lines: Optional[list[str]] = field(default=None, repr=False)
    _line_starts: Optional[list[int]] = field(default=None, repr=False)

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    def line(self, row: int) -> str:
        """0-based row; "" past the end, so positions a stale diagnostic points at stay harmless."""
        lines = self.lines
        return lines[row] if 0 <= row < len(lines) else ""

    def offset(self, position: types.Position, encoding: str) -> int:
        """Index into `text` of an LSP position (clamped to the document)."""
        starts = self._starts()
        if position.line >= len(starts):
            return len(self.text)
        row = max(position.line, 0)
        return starts[row] + from_client_column(self.lines[row], position.character, encoding)

    def client_position(self, row: int, column: int, encoding: str) -> types.Position:
        """0-based row and code-point column -> LSP position."""
        return types.Position(line=max(row, 0), character=to_client_column(self.line(row), column, encoding))

    def apply_change(self, change: types.TextDocumentContentChangeEvent, encoding: str) -> None:
        if isinstance(change, types.TextDocumentContentChangePartial):
            start = self.offset(change.range.start, encoding)
            end = max(start, self.offset(change.range.end, encoding))
            self._set_text(self.text[:start] + change.text + self.text[end:])
        else:
            self._set_text(change.text)

    def _set_text(self, text: str) -> None:
        self.text = text
        self._lines = self._line_starts = None

    def _starts(self) -> list[int]:
        if self._line_starts is None:
            starts, offset = [], 0
            for match in _LINE_BREAK.finditer(self.text):
                starts.append(offset)
                offset = match.end()
            starts.append(offset)
            self._line_starts = starts
        return self._line_starts


class DocumentStore:
    def __init__(self) -> None:
        self._documents: dict[str, TextDocument] = {}

    def open(self, item: types.TextDocumentItem) -> TextDocument:
        document = TextDocument(item.uri, item.text, item.version, item.language_id)
        self._documents[item.uri] = document
        return document

    def change(
        self, identifier: types.VersionedTextDocumentIdentifier, changes, encoding: str
    ) -> Optional[TextDocument]:
        document = self._documents.get(identifier.uri)
        if document is None:
            return None  # a change for a document never opened: nothing to keep in sync
        for change in changes:
            document.apply_change(change, encoding)
        document.version = identifier.version
        return document

    def close(self, uri: str) -> Optional[TextDocument]:
        return self._documents.pop(uri, None)

    def get(self, uri: str) -> Optional[TextDocument]:
        return self._documents.get(uri)

    def __iter__(self):
        return iter(list(self._documents.values()))
