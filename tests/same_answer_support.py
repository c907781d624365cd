"""What tests/test_same_answer.py and benchmarks/same_answer.py compare: one key per finding,
findings grouped by file, and the language server's answer for files opened in a workspace."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Iterable

from ddplint.source import decode_source
from lsp_client import initialize, open_document, published, server_config

Key = tuple[str, int, int, str]  # (code, line, column, message), as the command line counts them


def finding_key(item: dict) -> Key:
    """A finding of `--output-format json`."""
    return (item["code"], item["location"]["row"], item["location"]["column"], item["message"])


def findings_by_file(items: Iterable[dict]) -> dict[str, list[Key]]:
    """JSON findings by file name as reported (notebook cells left out), each file's sorted."""
    by_file: dict[str, list[Key]] = {}
    for item in items:
        if item.get("cell") is None:
            by_file.setdefault(Path(item["filename"]).as_posix(), []).append(finding_key(item))
    return {name: sorted(keys) for name, keys in by_file.items()}


CONCISE_LINE = re.compile(r"^(.+?):(\d+):(\d+): ([A-Z]+\d+) (?:\[\*\] )?(.*)$")


def concise_findings(output: str) -> dict[str, list[Key]]:
    """The default (concise) output's findings by file: what `--fix` reports as left. Its
    `--show-fixes` listing comes only with this output, never with JSON."""
    by_file: dict[str, list[Key]] = {}
    for line in output.splitlines():
        if (found := CONCISE_LINE.match(line)):
            name, row, column, code, message = found.groups()
            by_file.setdefault(Path(name).as_posix(), []).append((code, int(row), int(column), message))
    return {name: sorted(keys) for name, keys in by_file.items()}


def shown_fixes(stderr: str) -> dict[str, Counter]:
    """--show-fixes's listing: "- path:" then "    N × CODE (name)" lines."""
    counts: dict[str, Counter] = {}
    current = None
    for line in stderr.splitlines():
        if (file := re.match(r"^- (.+):$", line)):
            current = counts.setdefault(Path(file.group(1)).as_posix(), Counter())
        elif current is not None and (count := re.match(r"^\s+(\d+) × (\S+) ", line)):
            current[count.group(2)] += int(count.group(1))
    return counts


def fix_difference(reported: list[Key], left: list[Key], fixed: Counter) -> str:
    """How a file's `--fix` answer departs from what the check reported ("" when it does not).
    Nothing fixed: exactly the reported findings are left. Something fixed: every reported
    finding is either fixed or left (counted by rule, since fixes move lines), and the fixed file
    has no DDP000 of its own. A fix may bring a follow-on finding that a later round fixes or
    leaves (DDP001's new sampler then wants DDP002's set_epoch): not a difference."""
    if not fixed:
        return "" if left == reported else f"nothing fixed, left {left}"
    accounted = Counter(code for code, *_ in left) + fixed
    missing = Counter(code for code, *_ in reported) - accounted
    broken = [key for key in left if key[0] == "DDP000" and key not in reported]
    if missing or broken:
        return f"fixed {dict(fixed)}, left {left}" + (f", lost {dict(missing)}" if missing else "")
    return ""


def lsp_key(diagnostic, lines: list[str]) -> Key:
    """A published diagnostic as the command line would report it: 1-based, the column in
    characters (the server counts UTF-16 units), the message without the editor's explanation."""
    line = diagnostic.range.start.line
    text = lines[line] if line < len(lines) else ""
    units = text.encode("utf-16-le")[: 2 * diagnostic.range.start.character]
    column = len(units.decode("utf-16-le", errors="ignore")) + 1
    return (diagnostic.code, line + 1, column, diagnostic.message.split("\n\n")[0])


async def lsp_findings(root: Path, names: Iterable[str]) -> dict[str, list[Key]]:
    """One `ddplint lsp` initialised on `root`; each file opened in turn, its first diagnostics kept."""
    found: dict[str, list[Key]] = {}
    client = await server_config().start()
    try:
        await initialize(client, root)
        for name in names:
            path = root / name
            text, _ = decode_source(path.read_bytes(), str(path))  # as the editor shows it, line breaks kept
            before = len(client.published)
            open_document(client, path.as_uri(), text)
            params = await published(client, path.as_uri(), after=before)
            found[name] = sorted(lsp_key(d, text.split("\n")) for d in params.diagnostics)
    finally:
        await client.shutdown_session()
        await client.stop()
    return found
