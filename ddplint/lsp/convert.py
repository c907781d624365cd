"""ddplint's types -> LSP's: diagnostics, ranges, edits."""

from __future__ import annotations

from lsprotocol import types

from ddplint.diagnostics import Diagnostic, Edit, Location
from ddplint.lsp.documents import TextDocument
from ddplint.lsp.rule_docs import RuleLinks
from ddplint.recovery import is_syntax_error

SOURCE = "ddplint"

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "info": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}
# `initializationOptions.severity`: one of the levels above for every rule finding, or "rule" for the
# rule's own level (error, or warning for deliberate trades like DDP010).
RULE_SEVERITY = "rule"
SEVERITY_CHOICES = (*_SEVERITY, RULE_SEVERITY)
DEFAULT_SEVERITY = "warning"  # as ruff's server shows lint findings; syntax errors stay errors


def lsp_severity(diagnostic: Diagnostic, setting: str) -> types.DiagnosticSeverity:
    if is_syntax_error(diagnostic):
        return types.DiagnosticSeverity.Error
    level = diagnostic.severity if setting == RULE_SEVERITY else setting
    return _SEVERITY.get(level, types.DiagnosticSeverity.Warning)


def position(document: TextDocument, location: Location, encoding: str) -> types.Position:
    """1-based row / code-point column -> 0-based LSP position in the client's encoding."""
    return document.client_position(location.row - 1, location.column - 1, encoding)


def lsp_range(document: TextDocument, start: Location, end: Location, encoding: str) -> types.Range:
    return types.Range(start=position(document, start, encoding), end=position(document, end, encoding))


def to_lsp_diagnostic(
    diagnostic: Diagnostic, document: TextDocument, encoding: str, links: RuleLinks, severity: str = DEFAULT_SEVERITY
) -> types.Diagnostic:
    href = links.url(diagnostic.code)
    return types.Diagnostic(
        range=lsp_range(document, diagnostic.location, diagnostic.end_location, encoding),
        message=editor_message(diagnostic),
        severity=lsp_severity(diagnostic, severity),
        code=diagnostic.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
    )


def editor_message(diagnostic: Diagnostic) -> str:
    """The short message, then (a paragraph below, which editors show in the diagnostic's hover
    and lists cut off at the first line) the finding's own why, as `--output-format full` gives it."""
    if diagnostic.explanation is None:
        return diagnostic.message
    return f"{diagnostic.message}\n\n{diagnostic.explanation}"


def to_text_edit(edit: Edit, document: TextDocument, encoding: str) -> types.TextEdit:
    return types.TextEdit(
        range=lsp_range(document, edit.location, edit.end_location, encoding), new_text=edit.content
    )


def workspace_edit(
    document: TextDocument, edits: list[types.TextEdit], versioned: bool
) -> types.WorkspaceEdit:
    """`documentChanges` carries the version the edits were computed for, so a client refuses
    them if the text moved on meanwhile; older clients only understand `changes`."""
    if versioned:
        identifier = types.OptionalVersionedTextDocumentIdentifier(uri=document.uri, version=document.version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=identifier, edits=edits)])
    return types.WorkspaceEdit(changes={document.uri: edits})


def ranges_touch(a: types.Range, b: types.Range) -> bool:
    """Whether two ranges overlap or touch (a cursor at either end of a diagnostic counts)."""
    return _key(a.start) <= _key(b.end) and _key(b.start) <= _key(a.end)


def _key(p: types.Position) -> tuple[int, int]:
    return (p.line, p.character)
