"""Formatters: diagnostics in, text out. Each takes the full list so it can add summaries.

Shapes follow ruff where ruff has one (concise, full, json, json-lines, github), and SARIF 2.1.0 as
GitHub code scanning reads it. `text` is the older name of `concise` and stays its alias.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from ddplint import __version__
from ddplint.diagnostics import Diagnostic, Edit, Fix, Severity
from ddplint.rules import ENTRIES_BY_CODE, META_BY_CODE, REGISTRY, load_rules
from ddplint.source import line_at, read_file

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _read_line(diagnostic: Diagnostic) -> Optional[str]:
    """The source line a diagnostic points at, read from disk (notebooks: from their cell)."""
    try:
        if diagnostic.cell is not None:
            from ddplint.notebook import cell_source

            text = cell_source(Path(diagnostic.filename), diagnostic.cell)
        else:
            text = read_file(diagnostic.filename).decode("utf-8", errors="replace")  # never a pipe or a device
    except (OSError, ValueError):
        return None
    return None if text is None else line_at(text, diagnostic.location.row)


@dataclass
class FormatOptions:
    color: bool = False
    # The source line for `full`; the CLI swaps in one that knows stdin's text.
    line_of: Callable[[Diagnostic], Optional[str]] = field(default=_read_line)
    # The rule's documentation page for json's `url` and SARIF's `helpUri` (the CLI passes the
    # language server's RuleLinks.url); None where a code has no page.
    url_of: Callable[[str], Optional[str]] = field(default=lambda code: None)


# -- colour -------------------------------------------------------------------------------------
def use_color(stream) -> bool:
    """Colour only on a terminal; NO_COLOR (any non-empty value) turns it off, FORCE_COLOR on."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def _paint(text: str, code: str, options: FormatOptions) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if options.color else text


def _where(d: Diagnostic) -> str:
    cell = f"cell {d.cell}:" if d.cell is not None else ""
    return f"{d.filename}:{cell}{d.location.row}:{d.location.column}"


def _marker(d: Diagnostic) -> str:
    """`[*]`: a fix is offered (the CLI strips unsafe ones unless --unsafe-fixes is given)."""
    return "[*] " if d.fix is not None else ""


# -- text and full --------------------------------------------------------------------------------
def format_text(diagnostics: Sequence[Diagnostic], options: Optional[FormatOptions] = None) -> str:
    options = options or FormatOptions()
    return "".join(_headline(d, options) + "\n" for d in diagnostics)


def _headline(d: Diagnostic, options: FormatOptions) -> str:
    where = _paint(_where(d), "1", options)
    code = _paint(d.code, "1;31" if d.severity is Severity.ERROR else "1;33", options)
    return f"{where}: {code} {_marker(d)}{d.message}"


def format_full(diagnostics: Sequence[Diagnostic], options: Optional[FormatOptions] = None) -> str:
    """Each finding with its source line, a caret under the span, the finding's why and the rule's
    fix hint."""
    options = options or FormatOptions()
    blocks = []
    for d in diagnostics:
        lines = [_headline(d, options)]
        source = options.line_of(d)
        if source is not None:
            number = str(d.location.row)
            gutter = " " * len(number)
            start = d.location.column - 1
            same_line = d.end_location.row == d.location.row
            width = max(1, (d.end_location.column - 1 - start) if same_line else len(source.rstrip()) - start)
            caret = _paint("^" * width, "1;31", options)
            lines += [
                f"{gutter} |",
                f"{number} | {source.rstrip()}",
                f"{gutter} | {_expand_tabs_prefix(source, start)}{caret}",
                f"{gutter} |",
            ]
        if d.explanation is not None:
            lines.append("  = why: " + d.explanation)
        if d.code in ENTRIES_BY_CODE:  # the rule's prose: loads the rule
            lines.append("  = help: " + _one_paragraph(load_rules([d.code])[0].fix))
        if d.fix is not None:
            lines.append(f"  = fix ({d.fix.applicability}): {d.fix.message}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _expand_tabs_prefix(source: str, column: int) -> str:
    """Spaces (tabs kept) so the caret lands under the right character."""
    return "".join(ch if ch == "\t" else " " for ch in source[:column])


def _one_paragraph(text: str) -> str:
    return " ".join(textwrap.dedent(text).split())


# -- machine-readable -------------------------------------------------------------------------------
def _position(location) -> dict:
    return {"row": location.row, "column": location.column}


def _fix_json(fix: Optional[Fix]) -> Optional[dict]:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability,
        "message": fix.message,
        "edits": [_edit_json(edit) for edit in fix.edits],
    }


def _edit_json(edit: Edit) -> dict:
    return {"content": edit.content, "location": _position(edit.location), "end_location": _position(edit.end_location)}


def diagnostic_json(d: Diagnostic, url: Optional[str] = None) -> dict:
    """One diagnostic in the shape ruff's json uses, so existing tooling can read it; `url`: the
    rule's page (null when it has none)."""
    return {
        "cell": d.cell,
        "code": d.code,
        "name": rule_name(d.code),
        "url": url,
        "message": d.message,
        "filename": d.filename,
        "location": _position(d.location),
        "end_location": _position(d.end_location),
        "noqa_row": d.location.row,
        "severity": d.severity,
        "fix": _fix_json(d.fix),
    }


def format_json(diagnostics: Sequence[Diagnostic], options: Optional[FormatOptions] = None) -> str:
    url_of = (options or FormatOptions()).url_of
    return json.dumps([diagnostic_json(d, url_of(d.code)) for d in diagnostics], indent=2) + "\n"


def format_json_lines(diagnostics: Sequence[Diagnostic], options: Optional[FormatOptions] = None) -> str:
    url_of = (options or FormatOptions()).url_of
    return "".join(json.dumps(diagnostic_json(d, url_of(d.code))) + "\n" for d in diagnostics)


def format_github(diagnostics: Sequence[Diagnostic], options: Optional[FormatOptions] = None) -> str:
    """GitHub Actions workflow commands: each finding becomes an annotation on the pull request."""
    out = []
    for d in diagnostics:
        level = str(d.severity)  # GitHub's annotation levels include both
        properties = {
            "title": f"ddplint ({d.code})",
            "file": d.filename,
            "line": d.location.row,
            "col": d.location.column,
            "endLine": d.end_location.row,
            "endColumn": d.end_location.column,
        }
        rendered = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
        out.append(f"::{level} {rendered}::{_escape_data(f'{_where(d)}: {d.code} {d.message}')}\n")
    return "".join(out)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


# -- SARIF ------------------------------------------------------------------------------------------
def format_sarif(diagnostics: Sequence[Diagnostic], options: Optional[FormatOptions] = None) -> str:
    """SARIF 2.1.0 with every rule described, as GitHub code scanning expects."""
    index = {entry.code: i for i, entry in enumerate(REGISTRY)}
    results = [_sarif_result(d, index) for d in diagnostics]
    url_of = (options or FormatOptions()).url_of
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ddplint",
                        "version": __version__,
                        "rules": [_sarif_rule(rule, url_of(rule.code)) for rule in load_rules(ENTRIES_BY_CODE)],
                    }
                },
                "results": results,
                "columnKind": "unicodeCodePoints",  # characters of the decoded line, as everywhere
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"


def _sarif_rule(rule, url: Optional[str]) -> dict:
    help_text = _one_paragraph(rule.fix)
    described: dict = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": _one_paragraph(rule.what)},
        "help": {"text": help_text, "markdown": rule.documentation()},
        "defaultConfiguration": {"level": str(Severity(rule.severity))},  # SARIF levels include both
        "properties": {"tags": ["performance", "distributed"]},
    }
    if url is not None:
        described["helpUri"] = url
    return described


def _sarif_uri(filename: str) -> str:
    """Relative to the working directory when inside it (code scanning maps those to the repo)."""
    path = Path(filename)
    try:
        return Path(os.path.abspath(path)).relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


def _sarif_region(start, end) -> dict:
    return {"startLine": start.row, "startColumn": start.column, "endLine": end.row, "endColumn": end.column}


def _sarif_result(d: Diagnostic, index: dict[str, int]) -> dict:
    result: dict = {
        "ruleId": d.code,
        "level": str(d.severity),
        "message": {"text": d.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _sarif_uri(d.filename)},
                    "region": _sarif_region(d.location, d.end_location),
                }
            }
        ],
    }
    if d.code in index:
        result["ruleIndex"] = index[d.code]
    if d.cell is not None:
        result["properties"] = {"cell": d.cell}
    if d.fix is not None and d.cell is None:
        result["fixes"] = [
            {
                "description": {"text": f"{d.fix.message} ({d.fix.applicability})"},
                "artifactChanges": [
                    {
                        "artifactLocation": {"uri": _sarif_uri(d.filename)},
                        "replacements": [
                            {
                                "deletedRegion": _sarif_region(edit.location, edit.end_location),
                                "insertedContent": {"text": edit.content},
                            }
                            for edit in d.fix.edits
                        ],
                    }
                ],
            }
        ]
    return result


# -- statistics -----------------------------------------------------------------------------------
def format_statistics(diagnostics: Sequence[Diagnostic], as_json: bool = False) -> str:
    """Counts per code, most frequent first (ruff's `--statistics`)."""
    counts = Counter(d.code for d in diagnostics)
    fixable = {d.code for d in diagnostics if d.fix is not None}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if as_json:
        items = [
            {"code": code, "name": rule_name(code), "count": count, "fixable": code in fixable} for code, count in rows
        ]
        return json.dumps(items, indent=2) + "\n"
    if not rows:
        return ""
    width = max(len(str(count)) for _, count in rows)
    return "".join(
        f"{count:>{width}}\t{code}\t{'[*]' if code in fixable else '[ ]'} {rule_name(code)}\n" for code, count in rows
    )


def rule_name(code: str) -> str:
    entry = ENTRIES_BY_CODE.get(code) or META_BY_CODE.get(code)
    return entry.name if entry else "error"


FORMATTERS: dict[str, Callable[..., str]] = {
    "concise": format_text,
    "text": format_text,  # concise's older name
    "full": format_full,
    "json": format_json,
    "json-lines": format_json_lines,
    "sarif": format_sarif,
    "github": format_github,
}
COLORED_FORMATS = frozenset({"concise", "text", "full"})
# Formats whose findings name the rule's page (`url`, `helpUri`).
LINKED_FORMATS = frozenset({"json", "json-lines", "sarif"})
