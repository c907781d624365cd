"""Facts about source text that every layer agrees on: where lines break, how a file's bytes
become text and back, how large a file ddplint analyses at all, and how any file is read
(`read_file`: regular files only, bounded).

Python's tokenizer (and so libcst, the engine's rows, LSP and `--output-format full`) breaks lines
at `\\r\\n`, `\\r` and `\\n` only. `str.splitlines()` also breaks at form feeds, `\\x1c`-`\\x1e`,
`\\x85`, `\\u2028` and `\\u2029`: a form feed (Emacs page breaks, much of the stdlib) would shift
every row below it. So no module splits lines itself; they all call these helpers.
"""

from __future__ import annotations

import ast
import io
import os
import re
import stat
import tokenize
from typing import Union

LINE_BREAK = re.compile(r"\r\n|\r|\n")

# libcst holds ~500 bytes of tree per byte of source: a 2 MB file already costs ~1 GB. Hand-written
# code stays far below (the largest file in the torch package is 1.1 MB, and it is a stub); only
# generated tables get there, and they hold no training loop. The engine refuses larger files and
# the project index does not summarise them.
MAX_ANALYSED_BYTES = 2 * 10**6
# The most ddplint reads of any one file. Larger files than MAX_ANALYSED_BYTES are still read, to
# tell whether they matter (a 50 MB generated table with a trigger word is reported, one without
# is not; a notebook with its outputs often weighs tens of MB around a few kB of code); this bound
# only keeps a 10 GB file that happens to be named `.py` from being loaded into memory.
MAX_READ_BYTES = 256 * 2**20

# The kinds of file that are not read: one could block forever (a named pipe with no writer) or
# never end (`/dev/zero`, a socket).
_NOT_REGULAR = (
    (stat.S_ISDIR, "is a directory"),
    (stat.S_ISFIFO, "not a regular file (a named pipe)"),
    (stat.S_ISCHR, "not a regular file (a character device)"),
    (stat.S_ISBLK, "not a regular file (a block device)"),
    (stat.S_ISSOCK, "not a regular file (a socket)"),
)
# Opening a named pipe blocks until a writer comes, unless it is opened without blocking.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class UnreadableFile(OSError):
    """A file `read_file` will not read; `strerror` says why in a few words, as an OSError's does
    (so every `except OSError` that reports "cannot read: <strerror>" covers it too)."""

    def __init__(self, reason: str):
        super().__init__(None, reason)


def read_file(path: Union[str, "os.PathLike[str]"], limit: int = MAX_READ_BYTES) -> bytes:
    """The bytes of a regular file (links followed), at most `limit` of them. Anything else is
    refused before a byte is read, with OSError (UnreadableFile for a file of the wrong kind or
    size). The kind is judged once before opening (a device is never even opened) and again on
    the open descriptor, and the open never blocks: a file swapped for a pipe in between is
    refused, not waited on."""
    _refuse_unless_regular(os.stat(path).st_mode)
    descriptor = os.open(path, _OPEN_FLAGS)
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(descriptor)
        _refuse_unless_regular(info.st_mode)
        if info.st_size > limit:
            raise UnreadableFile(_too_large(info.st_size, limit))
        # As much as fstat says and one byte more: a buffer of the limit's size for every file
        # would cost more than the read. A file that grew since is read on, up to the limit.
        data = handle.read(info.st_size + 1)
        if len(data) > info.st_size:
            data += handle.read(limit + 1 - len(data))
    if len(data) > limit:
        raise UnreadableFile(_too_large(len(data), limit))
    return data


def _refuse_unless_regular(mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    reason = next((why for test, why in _NOT_REGULAR if test(mode)), "not a regular file")
    raise UnreadableFile(reason)


def _too_large(size: int, limit: int) -> str:
    return f"{size / 2**20:.0f} MB is over the {limit / 2**20:.0f} MB limit for any file"


def reason_of(error: OSError) -> str:
    """An OSError in a few words, for "cannot read: ..." lines."""
    return error.strerror or type(error).__name__


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their terminators, split where Python splits them. A text that
    ends with a line break has an empty last line, as an editor shows it."""
    return LINE_BREAK.split(text)


def line_starts(text: str) -> list[int]:
    """The offset at which each line of `text` starts (the first is 0)."""
    return [0, *(match.end() for match in LINE_BREAK.finditer(text))]


def lines_with_ends(text: str) -> list[str]:
    """The lines of `text` with their terminators (none for an unterminated last line), split
    where Python splits them: joined, they give `text` back."""
    starts = line_starts(text)
    pieces = [text[start:end] for start, end in zip(starts, [*starts[1:], len(text)])]
    return pieces if pieces[-1] else pieces[:-1]


def first_newline(text: str) -> str:
    """The line break `text` uses (its first one), `\\n` when it has none: what inserted lines get."""
    match = LINE_BREAK.search(text)
    return match.group() if match else "\n"


def line_at(text: str, row: int) -> str | None:
    """Line `row` (1-based) of `text`, or None past its end."""
    lines = split_lines(text)
    return lines[row - 1] if 0 < row <= len(lines) else None


# -- bytes and text -----------------------------------------------------------------------------
# Columns everywhere (findings, fix edits, json, sarif) count characters of the decoded line, so a
# file must be decoded as Python decodes it: a UTF-8 BOM, else a PEP 263 coding cookie on one of
# the first two lines, else UTF-8. Notebooks are JSON: always UTF-8.
_COOKIE_WORD = re.compile(rb"coding(?=[:=])")


class SourceEncodingError(ValueError):
    """Bytes that cannot be read as the encoding they declare, or text that cannot be written
    back in it; the message says why, in one line."""


def is_notebook(filename: str) -> bool:
    return filename.endswith(".ipynb")


def compile_flags(filename: str) -> int:
    """CPython compiler flags for checking `filename`'s program. Jupyter runs a cell's top-level
    `await` (IPython's autoawait), so in a notebook it is no error; in a .py file it is."""
    return ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if is_notebook(filename) else 0


def source_encoding(data: bytes, filename: str) -> str:
    """The codec `filename` is read and written with ("utf-8-sig" drops the BOM and puts it back)."""
    if is_notebook(filename):
        return "utf-8"
    try:
        return tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except SyntaxError as exc:  # an unknown codec, or a cookie that contradicts the BOM
        raise SourceEncodingError(str(exc)) from None


def decode_source(data: bytes, filename: str) -> tuple[str, str]:
    """(text, codec): the file's text exactly (line breaks untranslated), as Python reads it."""
    encoding = source_encoding(data, filename)
    try:
        return data.decode(encoding), encoding
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceEncodingError(str(exc)) from None


def encode_source(text: str, encoding: str, filename: str) -> bytes:
    """`text` as the bytes of a file read with `encoding`, checked to read back as the same text
    in the same codec (a fix that moved the coding cookie would change how every byte reads)."""
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError:
        raise SourceEncodingError(f"the fixed text has characters {encoding} cannot hold") from None
    try:
        same = decode_source(data, filename) == (text, encoding)
    except SourceEncodingError:
        same = False
    if not same:
        raise SourceEncodingError(f"the fixed text would no longer read as {encoding}")
    return data


def parser_bytes(text: str) -> bytes:
    """`text` as bytes that a parser honouring coding cookies (compile, libcst) decodes back to
    exactly `text`: in the codec its cookie declares, else UTF-8. Text that codec cannot hold (typed
    in an editor) gets UTF-8 with the cookie's word disguised, same length: every column stays put."""
    data = text.encode("utf-8")
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except SyntaxError:
        return data  # an unknown codec: the parser reports it
    if encoding in ("utf-8", "utf-8-sig"):
        return data
    try:
        return text.encode(encoding)
    except UnicodeEncodeError:
        return _without_cookie(data)


def _without_cookie(data: bytes) -> bytes:
    """`data` with every `coding:` in its first two comment lines spelt `c0ding:`."""
    head = data.splitlines(keepends=True)[:2]
    disguised = [_COOKIE_WORD.sub(b"c0ding", line) if line.lstrip(b" \t\f").startswith(b"#") else line for line in head]
    return b"".join(disguised) + data[sum(map(len, head)):]
