"""Code actions for one document: apply a finding's fix, apply every fix, add `# noqa: CODE`."""

from __future__ import annotations

from typing import Optional, Sequence

from lsprotocol import types

from ddplint.diagnostics import Diagnostic
from ddplint.fix import apply_fixes, selected_fixes
from ddplint.lsp import noqa
from ddplint.lsp.convert import lsp_range, ranges_touch, to_text_edit, workspace_edit
from ddplint.lsp.documents import TextDocument, split_lines
from ddplint.rules import ERROR_CODE

FIX_ALL_KIND = types.CodeActionKind.SourceFixAll.value + ".ddplint"
KINDS = (types.CodeActionKind.QuickFix, FIX_ALL_KIND)


class ActionBuilder:
    """Builds the actions for one request; `lsp_diagnostic(d)` gives the LSP diagnostic an action
    resolves (so the client can tie the action to the squiggle)."""

    def __init__(self, document: TextDocument, encoding: str, versioned_edits: bool, lsp_diagnostic):
        self.document = document
        self.encoding = encoding
        self.versioned_edits = versioned_edits
        self.lsp_diagnostic = lsp_diagnostic

    def for_range(
        self,
        diagnostics: Sequence[Diagnostic],
        requested: types.Range,
        only: Optional[Sequence[str]],
        unsafe: bool = False,
    ) -> list[types.CodeAction]:
        touching = [d for d in diagnostics if ranges_touch(self._range(d), requested)]
        actions: list[types.CodeAction] = []
        if _wanted(types.CodeActionKind.QuickFix, only):
            actions.extend(self.apply_fix(d) for d in touching if d.fix is not None)
            syntax = noqa.line_syntax(self.document.text) if touching else None
            actions.extend(a for a in (self.add_noqa(d, syntax) for d in touching) if a is not None)
        if _wanted(FIX_ALL_KIND, only):
            fix_all = self.fix_all(diagnostics, unsafe)
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    def apply_fix(self, diagnostic: Diagnostic) -> types.CodeAction:
        fix = diagnostic.fix
        assert fix is not None, "only diagnostics with a fix get a fix action"
        title = f"{diagnostic.code}: {fix.message}" + ("" if fix.is_safe else " (unsafe)")
        edits = [to_text_edit(edit, self.document, self.encoding) for edit in fix.edits]
        return types.CodeAction(
            title=title,
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[self.lsp_diagnostic(diagnostic)],
            edit=workspace_edit(self.document, edits, self.versioned_edits),
            is_preferred=fix.is_safe,
        )

    def fix_all(self, diagnostics: Sequence[Diagnostic], unsafe: bool) -> Optional[types.CodeAction]:
        """Every safe fix in the file (unsafe ones too if the user opted in) as one edit, applied
        the way `ddplint --fix` applies them; None when there is nothing to fix."""
        fixes = selected_fixes(diagnostics, unsafe)
        if not fixes:
            return None
        fixed = apply_fixes(self.document.text, fixes)
        if fixed == self.document.text:
            return None
        edit = self._replace_changed_span(fixed)
        return types.CodeAction(
            title="ddplint: apply all " + ("fixes" if unsafe else "safe fixes") + " in this file",
            kind=FIX_ALL_KIND,
            diagnostics=[self.lsp_diagnostic(d) for d in diagnostics if d.fix is not None and d.fix in fixes],
            edit=workspace_edit(self.document, [edit], self.versioned_edits),
        )

    def _replace_changed_span(self, new_text: str) -> types.TextEdit:
        """One edit covering only what differs (common prefix and suffix left alone), so the
        editor keeps the cursor, folds and marks outside it."""
        old_text = self.document.text
        prefix = _common_prefix(old_text, new_text)
        suffix = _common_prefix(old_text[prefix:][::-1], new_text[prefix:][::-1])
        start, end = prefix, len(old_text) - suffix
        return types.TextEdit(
            range=types.Range(start=self._position_at(start), end=self._position_at(end)),
            new_text=new_text[prefix : len(new_text) - suffix],
        )

    def _position_at(self, offset: int) -> types.Position:
        before = split_lines(self.document.text[:offset])
        return self.document.client_position(len(before) - 1, len(before[-1]), self.encoding)

    def add_noqa(self, diagnostic: Diagnostic, syntax: Optional[noqa.LineSyntax]) -> Optional[types.CodeAction]:
        if diagnostic.code == ERROR_CODE:
            return None  # syntax errors and unreadable files cannot be silenced line by line
        row = diagnostic.location.row - 1  # the engine reads `# noqa` on the finding's first row
        if syntax is not None and row in syntax.no_comment_rows:
            return None  # the row ends inside a string or with a backslash: no comment fits
        comment_start = syntax.comment_start.get(row) if syntax is not None else None
        line = self.document.line(row)
        line_edit = noqa.add_code(line, diagnostic.code, comment_start)
        if line_edit is None:
            return None
        start = self.document.client_position(row, line_edit.start, self.encoding)
        end = self.document.client_position(row, line_edit.end, self.encoding)
        edit = types.TextEdit(range=types.Range(start=start, end=end), new_text=line_edit.text)
        return types.CodeAction(
            title=f"{diagnostic.code}: add `# noqa: {diagnostic.code}` to this line",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[self.lsp_diagnostic(diagnostic)],
            edit=workspace_edit(self.document, [edit], self.versioned_edits),
        )

    def _range(self, diagnostic: Diagnostic) -> types.Range:
        return lsp_range(self.document, diagnostic.location, diagnostic.end_location, self.encoding)


def _wanted(kind: str, only: Optional[Sequence[str]]) -> bool:
    """LSP's `only` filter: a requested kind matches itself and its sub-kinds (`source.fixAll`
    asks for `source.fixAll.ddplint`)."""
    if not only:
        return True
    return any(kind == k or kind.startswith(k + ".") for k in only)


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    low, high = 0, n  # binary search on slices: C-speed comparisons instead of a Python loop
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
