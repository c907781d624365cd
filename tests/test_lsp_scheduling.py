"""When `ddplint lsp` analyses: at once for a change after a quiet spell, once for the rest of a
burst of changes, at once on save, fresh for code actions.

Counted, never timed: the server logs one line per analysis and the tests count those lines.
"""

from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp_client import (
    EXAMPLES,
    analyses_of,
    apply_text_edits,
    edits_for,
    initialize,
    insert,
    open_document,
    published,
    server_config,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]  # starts language servers

BUGGY = (EXAMPLES / "ddp002_missing_set_epoch_buggy.py").read_text()
DDP002_ROW = next(i for i, line in enumerate(BUGGY.splitlines()) if "# <- DDP002" in line)


# A quiet period long enough that five changes written back to back always fall inside it, even
# on a loaded machine.
@pytest_lsp.fixture(config=server_config(), scope="module")
async def burst_client(lsp_client: LanguageClient):
    await initialize(lsp_client, debounceMs=400)
    yield
    await lsp_client.shutdown_session()


# A quiet period that never ends within a test: only save and code actions can trigger analyses.
@pytest_lsp.fixture(config=server_config("--debounce-ms", "600000"), scope="module")
async def patient_client(lsp_client: LanguageClient):
    await initialize(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def test_a_burst_of_keystrokes_costs_one_analysis(burst_client: LanguageClient):
    client, uri = burst_client, "file:///virtual/burst.py"
    open_document(client, uri, BUGGY)
    await published(client, uri, version=1)
    assert analyses_of(client, uri) == 1
    # Type " ok!" one character at a time into the comment at the end of the finding's line.
    end = len(BUGGY.splitlines()[DDP002_ROW])
    for version, char in enumerate(" ok!", start=2):
        insert(client, uri, version=version, line=DDP002_ROW, character=end + version - 2, text=char)
    params = await published(client, uri, version=5)
    assert [d.code for d in params.diagnostics] == ["DDP002"]
    assert params.diagnostics[0].range.start.line == DDP002_ROW  # same rows: no newline typed
    # Analyses run one after another, so any analysis of versions 2-4 would have been logged
    # before the one of version 5 that was just published.
    assert analyses_of(client, uri) == 2
    assert [p.version for p in client.published if p.uri == uri] == [1, 5]


async def test_first_change_at_once_the_next_after_quiet_or_on_save(patient_client: LanguageClient):
    client, uri = patient_client, "file:///virtual/save.py"
    open_document(client, uri, BUGGY)
    await published(client, uri, version=1)
    # The quiet period never ends within the test: the first change after the open is analysed
    # at once all the same (leading edge) ...
    insert(client, uri, version=2, line=0, character=0, text="# moved down by one line\n")
    assert [d.code for d in (await published(client, uri, version=2)).diagnostics] == ["DDP002"]
    # ... and one right after it waits for the quiet period, here for the save.
    insert(client, uri, version=3, line=DDP002_ROW + 2, character=0, text="        sampler.set_epoch(epoch)\n")
    await _round_trip(client, uri)
    assert [p.version for p in client.published if p.uri == uri] == [1, 2]
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert (await published(client, uri, version=3)).diagnostics == []
    # Saving again without a change costs nothing.
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await _round_trip(client, uri)
    assert analyses_of(client, uri) == 3


async def _round_trip(client: LanguageClient, uri: str) -> None:
    """A request answered: every notification sent before it was handled."""
    await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=0))
    )


async def test_code_actions_are_computed_for_the_current_text(patient_client: LanguageClient):
    # A code action asked for after a change, before its (debounced) analysis ran, must not carry
    # edits computed for the old text.
    client, uri = patient_client, "file:///virtual/stale.py"
    open_document(client, uri, BUGGY)
    await published(client, uri, version=1)
    header = "# a new first line moves every finding down by one\n"
    # Two changes: the first is analysed at once (leading edge), the second waits for quiet.
    insert(client, uri, version=2, line=0, character=0, text=header[:-1])
    insert(client, uri, version=3, line=0, character=len(header) - 1, text="\n")
    row = DDP002_ROW + 1
    cursor = types.Range(start=types.Position(line=row, character=4), end=types.Position(line=row, character=4))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=cursor,
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix]),
        )
    )
    [noqa] = [a for a in actions if "noqa" in a.title]
    text = apply_text_edits(header + BUGGY, edits_for(noqa, uri))
    assert text.splitlines()[row].endswith("# noqa: DDP002")
    # The on-demand analysis also published the current diagnostics.
    assert (await published(client, uri, version=3)).diagnostics[0].range.start.line == row


# No quiet period at all: every change asks for an analysis at once.
@pytest_lsp.fixture(config=server_config("--debounce-ms", "0"), scope="module")
async def eager_client(lsp_client: LanguageClient):
    await initialize(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def test_changes_during_an_analysis_cost_one_more_analysis_not_one_each(eager_client: LanguageClient):
    client, uri = eager_client, "file:///virtual/eager.py"
    open_document(client, uri, BUGGY)
    await published(client, uri, version=1)
    end = len(BUGGY.splitlines()[DDP002_ROW])
    for version, char in enumerate(" more text!", start=2):  # versions 2..12
        insert(client, uri, version=version, line=DDP002_ROW, character=end + version - 2, text=char)
    assert [d.code for d in (await published(client, uri, version=12)).diagnostics] == ["DDP002"]
    # Ten changes behind the first fold into (at most) one more analysis of the newest text:
    # the open, the first change, one rerun, and one spare for a change that slipped in first.
    assert analyses_of(client, uri) <= 4
