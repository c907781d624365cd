"""Formatters: diagnostics in, text out. Each takes the full list so it can add summaries."""

from __future__ import annotations

import json
from typing import Callable, Sequence

from ddplint.diagnostics import Diagnostic
from ddplint.rules import RULES_BY_CODE


def format_text(diagnostics: Sequence[Diagnostic]) -> str:
    return "".join(
        f"{d.filename}:{d.location.row}:{d.location.column}: {d.code} {d.message}\n" for d in diagnostics
    )


def format_json(diagnostics: Sequence[Diagnostic]) -> str:
    """An array of objects in the shape ruff uses, so existing tooling can read it."""
    items = []
    for d in diagnostics:
        rule = RULES_BY_CODE.get(d.code)
        items.append(
            {
                "code": d.code,
                "name": rule.name if rule else "error",
                "message": d.message,
                "filename": d.filename,
                "location": {"row": d.location.row, "column": d.location.column},
                "end_location": {"row": d.end_location.row, "column": d.end_location.column},
                "noqa_row": d.location.row,
                "fix": None,
            }
        )
    return json.dumps(items, indent=2) + "\n"


FORMATTERS: dict[str, Callable[[Sequence[Diagnostic]], str]] = {
    "text": format_text,
    "json": format_json,
}
