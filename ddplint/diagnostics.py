"""The one finding type shared by the CLI, the output formats, the LSP server and verify, and the
diagnostics every layer reports problems with (unreadable files, syntax errors, crashed rules)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal, Optional, Union

# Not a rule: the code under which unreadable / unparsable files and internal errors are reported.
ERROR_CODE = "DDP000"


class TextEnum(str, Enum):
    """An enumeration whose members are also their plain text: JSON, SARIF, the cache and
    f-strings see "error" / "safe", and comparing with the text still works, while a misspelt
    value fails where it is made (`Severity("eror")` raises) instead of somewhere downstream."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    __hash__ = str.__hash__  # equal to its text, so it must hash like it (dict lookups by text)


class Severity(TextEnum):
    """"error" for what breaks scaling outright, "warning" for deliberate-but-costly trades
    (SARIF level, LSP severity)."""

    ERROR = "error"
    WARNING = "warning"


class Applicability(TextEnum):
    """`safe` fixes keep behaviour the user asked for and are applied by `--fix`; `unsafe` ones
    (`--unsafe-fixes`) change what the program does."""

    SAFE = "safe"
    UNSAFE = "unsafe"


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
    """Edits that resolve one finding, and whether `--fix` may apply them (see Applicability)."""

    message: str
    edits: tuple[Edit, ...]
    applicability: Union[Applicability, Literal["safe", "unsafe"]] = Applicability.SAFE

    def __post_init__(self) -> None:
        object.__setattr__(self, "applicability", Applicability(self.applicability))

    @property
    def is_safe(self) -> bool:
        return self.applicability is Applicability.SAFE


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    filename: str
    location: Location
    end_location: Location
    fix: Optional[Fix] = None
    severity: Union[Severity, Literal["error", "warning"]] = Severity.ERROR
    # Notebooks: the 1-based code cell the finding is in; location and end_location (and the
    # fix's edits) are then lines of that cell. None for plain files.
    cell: Optional[int] = None
    # The why (and how to fix) of this one finding, for `full`, hovers and the editor: `message`
    # stays one short line that says what, as ruff's do. None where the rule's page says it all.
    explanation: Optional[str] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity(self.severity))

    @property
    def sort_key(self):
        return (self.filename, self.cell or 0, self.location, self.code)


@dataclass(frozen=True)
class InternalError:
    """A rule that crashed on a file: reported (and the exit code says so), never fatal to the run."""

    filename: str
    code: str
    detail: str


def error_diagnostic(filename: str, message: str, row: int = 1, column: int = 1) -> Diagnostic:
    """A DDP000 diagnostic: a file that could not be read, decoded, parsed or analysed."""
    location = Location(max(row, 1), max(column, 1))
    return Diagnostic(ERROR_CODE, message, filename, location, location)


def one_line(text: str, limit: int = 160) -> str:
    """`text` (an exception's message) squeezed onto one line of at most `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
