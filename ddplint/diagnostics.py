"""The one finding type shared by the CLI, the output formats, the LSP server and verify."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True, order=True)
class Location:
    """A position in a file: 1-based row, 1-based column (ruff's convention)."""

    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace the text between `location` and `end_location` (end exclusive) with `content`.

    An insertion has `location == end_location`; a deletion has `content == ""`.
    """

    content: str
    location: Location
    end_location: Location


@dataclass(frozen=True)
class Fix:
    """Edits that resolve one finding. `safe` fixes keep behaviour the user asked for and are
    applied by `--fix`; unsafe ones (`--unsafe-fixes`) change what the program does."""

    message: str
    edits: tuple[Edit, ...]
    applicability: str = "safe"  # "safe" | "unsafe"

    @property
    def is_safe(self) -> bool:
        return self.applicability == "safe"


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    filename: str
    location: Location
    end_location: Location
    fix: Optional[Fix] = None
    # "error" for what breaks scaling outright, "warning" for deliberate-but-costly trades
    # (SARIF level, LSP severity).
    severity: str = "error"
    # Notebooks: the 1-based code cell the finding is in; location and end_location (and the
    # fix's edits) are then lines of that cell. None for plain files.
    cell: Optional[int] = None

    @property
    def sort_key(self):
        return (self.filename, self.cell or 0, self.location, self.code)
