"""The one finding type shared by the CLI, the output formats (and later the LSP and verify)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Location:
    """A position in a file: 1-based row, 1-based column (ruff's convention)."""

    row: int
    column: int


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    filename: str
    location: Location
    end_location: Location

    @property
    def sort_key(self):
        return (self.filename, self.location, self.code)
