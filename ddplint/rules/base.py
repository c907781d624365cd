"""What a rule is: its identity, its documentation, its examples and its check."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Callable, Iterable, Literal, Optional, Union

import libcst as cst

from ddplint.analysis.facts import ModuleFacts
from ddplint.analysis.model import ModuleModel
from ddplint.diagnostics import Severity
from ddplint.edits import FindingFix, NodeEdit
from ddplint.rules import ENTRIES_BY_CODE
from ddplint.source import split_lines


@dataclass(frozen=True)
class Finding:
    """A rule's verdict on one node; the engine turns it into a located `Diagnostic`."""

    code: str
    node: cst.CSTNode
    message: str
    severity: Severity = Severity.ERROR
    fix: Optional[FindingFix] = None
    explanation: Optional[str] = None  # see Diagnostic.explanation

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity(self.severity))


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str  # one line, for `ddplint rule` listings and LSP hovers
    what: str
    why: str
    fix: str
    silent: str  # when the rule deliberately says nothing
    blind_spots: str
    # What must occur in a file for the rule to have anything to say: the engine never parses a
    # file that holds none of the selected rules' triggers. Name patterns (`DataLoader` exactly,
    # `*valid*` any name holding "valid") must be names the code uses, not words in comments or
    # strings; anything else (`.to(`) is a raw substring. See ddplint/screen.py.
    triggers: tuple[bytes, ...]
    # Rules that only speak in distributed scripts also need one of DISTRIBUTED_TOKENS.
    distributed_only: bool
    # Reads the module through its one model: the records (`model.facts`) and the derived models.
    check: Callable[[ModuleModel], Iterable[Finding]]
    # Executable examples (Fixit style): the tests run every one. In `invalid` examples each
    # expected finding is marked by `# <- CODE` at the end of the reported line.
    invalid: tuple[str, ...]
    valid: tuple[str, ...]
    # "warning" for findings that are often a deliberate trade (see diagnostics.Severity).
    severity: Union[Severity, Literal["error", "warning"]] = Severity.ERROR
    # Kinds of word the rule cannot fire without, beyond its triggers: the file must hold a word
    # of every group (any case, anywhere in its bytes), or the rule is not run on it. Each rule
    # proves its groups where it names them; tests/test_screen.py runs every rule with and
    # without them over the corpus and the examples.
    requires: tuple[tuple[bytes, ...], ...] = ()
    # A distributed-only rule that also speaks in a module with no distributed code of its own
    # when other modules of the project run it in their ranks (DDP008: a `load_checkpoint()`
    # helper): the qualified names of the calls it judges there (DDP008: `torch.load`). The
    # engine runs it on such a module when it is a `.py` file of a project that may make one of
    # these calls (screen.may_call_any).
    judged_by_callers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity(self.severity))

    @property
    def default_enabled(self) -> bool:
        return ENTRIES_BY_CODE[self.code].default_enabled  # written once, in the registry

    def finding(
        self, node: cst.CSTNode, message: str, fix: Optional[FindingFix] = None, why: Optional[str] = None
    ) -> Finding:
        """`message` says what, in one short line naming the object; `why` is this finding's own
        explanation (why it hurts, what to do), shown by `full` and the editor."""
        return Finding(self.code, node, message, Severity(self.severity), fix, why)

    def documentation(self) -> str:
        """The rule's page, ruff style: what / why / example / fix / silence / blind spots."""
        sections = [
            f"# {self.name} ({self.code})",
            self.summary,
            "## What it does\n" + _prose(self.what),
            "## Why is this bad?\n" + _prose(self.why),
            "## Example\n```python\n" + example_source(self.invalid[0]) + "```",
            "Use instead:\n```python\n" + example_source(self.valid[0]) + "```",
            "## Fix\n" + _prose(self.fix),
            "## When it stays silent\n" + _prose(self.silent),
            "## Known blind spots\n" + _prose(self.blind_spots),
        ]
        if not self.default_enabled:
            sections.insert(2, f"Off by default: enable with `--select {self.code}`.")
        return "\n\n".join(sections) + "\n"


# A name longer than this is left out of a message (the message stays one short line).
_LONGEST_NAME_IN_MESSAGE = 32


def held_as(facts: ModuleFacts, node: cst.CSTNode, otherwise: str) -> str:
    """How a message names what `node` builds: `` `train_loader` `` when the value is assigned to
    one plain name, else `otherwise` ("this DataLoader")."""
    names = set(facts.assigned_to.get(id(node), ()))
    if len(names) == 1 and len(name := next(iter(names))) <= _LONGEST_NAME_IN_MESSAGE:
        return f"`{name}`"
    return otherwise


def flat_code(facts: ModuleFacts, node: cst.CSTNode, otherwise: str) -> str:
    """`node`'s code on one line, in backquotes, when it is short enough for a message."""
    code = " ".join(facts.module.code_for_node(node).split())
    return f"`{code}`" if len(code) <= _LONGEST_NAME_IN_MESSAGE else otherwise


def example_source(example: str) -> str:
    return textwrap.dedent(example).lstrip("\n")


def _prose(text: str) -> str:
    return textwrap.dedent(text).strip()


def expected_marks(source: str) -> list[tuple[int, str]]:
    """(line, code) for every `# <- CODE [CODE...]` mark in an example or corpus file."""
    marks: list[tuple[int, str]] = []
    for number, line in enumerate(split_lines(source), start=1):
        _, sep, tail = line.partition("# <- ")
        if sep:
            marks.extend((number, code) for code in tail.split() if code.startswith("DDP"))
    return marks


__all__ = ["Finding", "FindingFix", "NodeEdit", "Rule", "example_source", "expected_marks", "flat_code", "held_as"]
