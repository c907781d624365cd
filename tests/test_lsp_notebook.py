"""Notebook documents: the code cells checked as one program, each finding shown in its cell."""

from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp_client import EXAMPLES, apply_text_edits, edits_for, published, server_config

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]  # starts language servers

BUGGY = (EXAMPLES / "ddp002_missing_set_epoch_buggy.py").read_text()
SETUP, _, MAIN = BUGGY.partition("def main():")
MAIN = "def main():" + MAIN
# The finding's row inside the third cell (0-based).
DDP002_ROW_IN_MAIN = next(i for i, line in enumerate(MAIN.splitlines()) if "# <- DDP002" in line)

NOTEBOOK = "file:///virtual/train.ipynb"
CELLS = [f"vscode-notebook-cell:/virtual/train.ipynb#c{i}" for i in (1, 2, 3)]


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: LanguageClient):
    capabilities = pytest_lsp.client_capabilities("visual-studio-code")
    capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities()
    )
    result = await lsp_client.initialize_session(
        types.InitializeParams(capabilities=capabilities, initialization_options={"showSyntaxErrors": True})
    )
    lsp_client.server_notebook_sync = result.capabilities.notebook_document_sync
    yield
    await lsp_client.shutdown_session()


def cell(kind, uri):
    return types.NotebookCell(kind=kind, document=uri)


def open_notebook(client: LanguageClient) -> None:
    code, markup = types.NotebookCellKind.Code, types.NotebookCellKind.Markup
    texts = [("python", "%matplotlib inline\n" + SETUP), ("markdown", "# Training\n"), ("python", MAIN)]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=NOTEBOOK, notebook_type="jupyter-notebook", version=1,
                cells=[cell(code, CELLS[0]), cell(markup, CELLS[1]), cell(code, CELLS[2])],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
                for uri, (language, text) in zip(CELLS, texts)
            ],
        )
    )


async def test_server_offers_notebook_sync_for_python_cells(client: LanguageClient):
    [selector] = client.server_notebook_sync.notebook_selector
    assert [c.language for c in selector.cells] == ["python"]


async def test_notebook_finding_is_published_on_its_cell_and_follows_cell_edits(client: LanguageClient):
    open_notebook(client)
    [diagnostic] = (await published(client, CELLS[2], version=1)).diagnostics
    assert diagnostic.code == "DDP002"
    assert diagnostic.range.start.line == DDP002_ROW_IN_MAIN  # in the cell's own coordinates
    assert (await published(client, CELLS[0], version=1)).diagnostics == []  # the magic line is no error

    # Code actions on a cell edit that cell, in its own coordinates.
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=CELLS[2]),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix]),
        )
    )
    [fix] = [a for a in actions if "set_epoch" in a.title]
    edited = apply_text_edits(MAIN, edits_for(fix, CELLS[2]))
    assert edited.splitlines()[DDP002_ROW_IN_MAIN + 1].strip() == "sampler.set_epoch(epoch)"

    # Type set_epoch into the third cell: its finding goes away.
    at = types.Position(line=DDP002_ROW_IN_MAIN + 1, character=0)
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=NOTEBOOK, version=2),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=CELLS[2], version=2),
                            changes=[
                                types.TextDocumentContentChangePartial(
                                    range=types.Range(start=at, end=at), text="        sampler.set_epoch(epoch)\n"
                                )
                            ],
                        )
                    ]
                )
            ),
        )
    )
    assert (await published(client, CELLS[2], version=2)).diagnostics == []

    mark = len(client.published)
    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=NOTEBOOK),
            cell_text_documents=[types.TextDocumentIdentifier(uri=uri) for uri in CELLS],
        )
    )
    for uri in (CELLS[0], CELLS[2]):
        assert (await published(client, uri, after=mark)).diagnostics == []


async def test_a_finding_that_needs_two_cells_is_seen(client: LanguageClient):
    # The sampler is built in one cell and the epoch loop is in another: only checking the cells
    # as one program finds DDP002.
    uri = "file:///virtual/split.ipynb"
    cells = [f"vscode-notebook-cell:/virtual/split.ipynb#s{i}" for i in (1, 2)]
    first = (
        "import torch.distributed as dist\n"
        "from torch.utils.data import DataLoader, DistributedSampler\n"
        "dist.init_process_group('gloo')\n"
        "sampler = DistributedSampler(dataset, shuffle=True)\n"
        "loader = DataLoader(dataset, batch_size=8, sampler=sampler)\n"
    )
    second = "for epoch in range(3):\n    for batch in loader:\n        step(batch)\n"
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=uri, notebook_type="jupyter-notebook", version=1,
                cells=[cell(types.NotebookCellKind.Code, c) for c in cells],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=c, language_id="python", version=1, text=t) for c, t in zip(cells, (first, second))
            ],
        )
    )
    [diagnostic] = (await published(client, cells[1], version=1)).diagnostics
    assert diagnostic.code == "DDP002" and diagnostic.range.start.line == 0


async def test_a_syntax_error_is_reported_on_its_cell(client: LanguageClient):
    uri = "file:///virtual/broken.ipynb"
    cells = [f"vscode-notebook-cell:/virtual/broken.ipynb#b{i}" for i in (1, 2)]
    texts = ("import torch.nn as nn\nmodel = nn.Linear(2, 2)\n", "x = 1\nmodel = nn.DataParallel(model\n")
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=uri, notebook_type="jupyter-notebook", version=1,
                cells=[cell(types.NotebookCellKind.Code, c) for c in cells],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=c, language_id="python", version=1, text=t) for c, t in zip(cells, texts)
            ],
        )
    )
    [diagnostic] = (await published(client, cells[1], version=1)).diagnostics
    assert diagnostic.code == "DDP000" and "syntax error" in diagnostic.message
    assert diagnostic.severity == types.DiagnosticSeverity.Error  # rule findings are warnings by default
    # CPython points at the bracket never closed: row 2 of the cell, after `nn.DataParallel`.
    assert diagnostic.range.start == types.Position(line=1, character=len("model = nn.DataParallel"))
    assert (await published(client, cells[0], version=1)).diagnostics == []
