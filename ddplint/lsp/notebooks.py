"""Notebook documents the client syncs (`notebookDocument/*`): their cells, and the program
ddplint checks for them.

A notebook is checked the way `ddplint check nb.ipynb` checks it (`ddplint.notebook`): its Python
code cells joined into one program, IPython-only lines commented out; each finding is then
published on the cell it is in, in that cell's coordinates. The cells' texts live in the server's
DocumentStore like any open document, so hovers and code actions on a cell work unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Optional

from lsprotocol import types

from ddplint.diagnostics import Diagnostic
from ddplint.lsp.documents import DocumentStore, TextDocument, split_lines
from ddplint.notebook import Notebook, read_notebook, to_cells


@dataclass(eq=False)
class NotebookState:
    uri: str
    version: int
    cells: list[types.NotebookCell] = field(default_factory=list)  # in notebook order, all kinds


@dataclass(frozen=True)
class NotebookProgram:
    notebook: Notebook  # ddplint.notebook's view: the program and its line map
    code_cells: tuple[TextDocument, ...]  # the cells in the program, in order (cell k is [k-1])

    def by_cell(self, diagnostics) -> dict[str, list[Diagnostic]]:
        """Each program diagnostic in its cell's coordinates, keyed by the cell's URI."""
        found: dict[str, list[Diagnostic]] = {cell.uri: [] for cell in self.code_cells}
        for diagnostic in diagnostics:
            located = to_cells(diagnostic, self.notebook)
            if located.cell is not None and 1 <= located.cell <= len(self.code_cells):
                found[self.code_cells[located.cell - 1].uri].append(located)
        return found


class NotebookStore:
    def __init__(self, documents: DocumentStore):
        self._documents = documents
        self._notebooks: dict[str, NotebookState] = {}
        self._owner: dict[str, str] = {}  # cell URI -> notebook URI

    def open(self, params: types.DidOpenNotebookDocumentParams) -> NotebookState:
        notebook = params.notebook_document
        state = NotebookState(notebook.uri, notebook.version, list(notebook.cells))
        self._notebooks[notebook.uri] = state
        for cell in params.cell_text_documents:
            self._open_cell(cell, notebook.uri)
        return state

    def change(self, params: types.DidChangeNotebookDocumentParams, encoding: str) -> tuple[Optional[NotebookState], list[str]]:
        """Apply a change; returns the notebook and the URIs of cells it removed."""
        state = self._notebooks.get(params.notebook_document.uri)
        if state is None:
            return None, []
        state.version = params.notebook_document.version
        removed: list[str] = []
        cells = params.change.cells
        if cells is not None:
            if cells.structure is not None:
                removed = self._restructure(state, cells.structure)
            for data in cells.data or ():  # kind / metadata changes of existing cells
                state.cells = [data if c.document == data.document else c for c in state.cells]
            for content in cells.text_content or ():
                self._documents.change(content.document, content.changes, encoding)
        return state, removed

    def _restructure(self, state: NotebookState, structure: types.NotebookDocumentCellChangeStructure) -> list[str]:
        array = structure.array
        state.cells[array.start : array.start + array.delete_count] = list(array.cells or ())
        for cell in structure.did_open or ():
            self._open_cell(cell, state.uri)
        removed = [cell.uri for cell in structure.did_close or ()]
        for uri in removed:
            self._close_cell(uri)
        return removed

    def close(self, uri: str) -> list[str]:
        """Forget a notebook; returns its cells' URIs."""
        self._notebooks.pop(uri, None)
        cells = [cell_uri for cell_uri, owner in self._owner.items() if owner == uri]
        for cell in cells:
            self._close_cell(cell)
        return cells

    def _open_cell(self, item: types.TextDocumentItem, notebook_uri: str) -> None:
        self._documents.open(item)
        self._owner[item.uri] = notebook_uri

    def _close_cell(self, uri: str) -> None:
        self._documents.close(uri)
        self._owner.pop(uri, None)

    def owner(self, cell_uri: str) -> Optional[str]:
        return self._owner.get(cell_uri)

    def get(self, uri: str) -> Optional[NotebookState]:
        return self._notebooks.get(uri)

    def __iter__(self):
        return iter(list(self._notebooks.values()))

    def program(self, state: NotebookState) -> NotebookProgram:
        code_cells = []
        for cell in state.cells:
            document = self._documents.get(cell.document)
            if cell.kind == types.NotebookCellKind.Code and document is not None and _is_python(document):
                code_cells.append(document)
        # Through ddplint.notebook, so that magics, cell boundaries and line mapping are exactly
        # what `ddplint check` does with the saved .ipynb.
        as_ipynb = {"cells": [{"cell_type": "code", "source": _lf(cell.text)} for cell in code_cells], "metadata": {}}
        return NotebookProgram(read_notebook(json.dumps(as_ipynb)), tuple(code_cells))


def _is_python(document: TextDocument) -> bool:
    return document.language_id in ("python", "", None)


def _lf(text: str) -> str:
    return "\n".join(split_lines(text))  # the notebook reader splits cells at \n only
