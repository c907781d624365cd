"""`ddplint lsp` driven over stdio by a real LSP client (pytest-lsp)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from ddplint.rules import RULES_BY_CODE
from lsp_client import (
    EXAMPLES,
    apply_text_edits,
    edits_for,
    initialize,
    insert,
    logged,
    open_document,
    published,
    replace_all,
    server_config,
)

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]  # starts language servers

BUGGY = (EXAMPLES / "ddp002_missing_set_epoch_buggy.py").read_text()
FIXED = (EXAMPLES / "ddp002_missing_set_epoch_fixed.py").read_text()
DDP002_ROW = next(i for i, line in enumerate(BUGGY.splitlines()) if "# <- DDP002" in line)  # 0-based
DDP001_BUGGY = (EXAMPLES / "ddp001_missing_sampler_buggy.py").read_text()


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: LanguageClient):
    await initialize(lsp_client)
    yield
    await lsp_client.shutdown_session()


def uri_for(name: str) -> str:
    return f"file:///virtual/{name}"


async def code_actions(client, uri, range_, only=None):
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=range_,
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
    )


# -- diagnostics -----------------------------------------------------------------------------
async def test_open_buggy_script_publishes_its_finding(client: LanguageClient):
    uri = uri_for("open_buggy.py")
    open_document(client, uri, BUGGY)
    params = await published(client, uri, version=1)
    [diagnostic] = params.diagnostics
    assert diagnostic.code == "DDP002"
    assert diagnostic.source == "ddplint"
    assert diagnostic.severity == types.DiagnosticSeverity.Warning  # the default, as ruff's server
    # The one-line finding first (what lists show), the finding's why a paragraph below (the hover).
    what, _, why = diagnostic.message.partition("\n\n")
    assert "set_epoch" in what and len(what) <= 110 and "\n" not in what
    assert "every epoch replays the same order on every rank" in why
    # `for epoch in range(args.epochs):` reported from `for` to the end of its header.
    line = BUGGY.splitlines()[DDP002_ROW]
    assert diagnostic.range.start == types.Position(line=DDP002_ROW, character=line.index("for"))
    assert diagnostic.range.end == types.Position(line=DDP002_ROW, character=line.index(":  #"))


async def test_diagnostic_links_to_the_rule_page(client: LanguageClient):
    uri = uri_for("link.py")
    open_document(client, uri, BUGGY)
    [diagnostic] = (await published(client, uri, version=1)).diagnostics
    page = Path(urlparse(diagnostic.code_description.href).path)
    assert page.name == "DDP002.md"
    assert page.read_text() == RULES_BY_CODE["DDP002"].documentation()


async def test_editing_into_the_fixed_version_clears_diagnostics(client: LanguageClient):
    uri = uri_for("edit_to_fixed.py")
    open_document(client, uri, BUGGY)
    assert (await published(client, uri, version=1)).diagnostics
    replace_all(client, uri, FIXED, version=2)
    assert (await published(client, uri, version=2)).diagnostics == []


async def test_incremental_edit_adding_set_epoch_clears_the_finding(client: LanguageClient):
    uri = uri_for("incremental.py")
    open_document(client, uri, BUGGY)
    assert (await published(client, uri, version=1)).diagnostics
    insert(client, uri, version=2, line=DDP002_ROW + 1, character=0, text="        sampler.set_epoch(epoch)\n")
    assert (await published(client, uri, version=2)).diagnostics == []
    # ... and deleting it again brings the finding back, on the same row.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=DDP002_ROW + 1, character=0),
                        end=types.Position(line=DDP002_ROW + 2, character=0),
                    ),
                    text="",
                )
            ],
        )
    )
    [diagnostic] = (await published(client, uri, version=3)).diagnostics
    assert diagnostic.range.start.line == DDP002_ROW


async def test_close_clears_diagnostics(client: LanguageClient):
    uri = uri_for("close.py")
    open_document(client, uri, BUGGY)
    await published(client, uri, version=1)
    mark = len(client.published)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert (await published(client, uri, after=mark)).diagnostics == []


async def test_columns_are_utf16_code_units_after_non_bmp_characters(client: LanguageClient):
    uri = uri_for("emoji.py")
    line = 'tag = "\U0001F680\U0001F680"; model = nn.DataParallel(model)'
    open_document(client, uri, f"import torch.nn as nn\nmodel = nn.Linear(2, 2)\n{line}\n")
    [diagnostic] = (await published(client, uri, version=1)).diagnostics
    assert diagnostic.code == "DDP003"
    # Two rockets are two code points but four UTF-16 code units.
    assert diagnostic.range.start == types.Position(line=2, character=line.index("nn.DataParallel") + 2)
    assert diagnostic.range.end == types.Position(line=2, character=len(line) + 2)


async def test_form_feed_does_not_shift_rows(client: LanguageClient):
    # str.splitlines() breaks at \x0c; LSP and Python's tokenizer do not.
    uri = uri_for("formfeed.py")
    source = "import torch.nn as nn\n\x0c\nmodel = nn.Linear(2, 2)  # \x0c here\nmodel = nn.DataParallel(model)\n"
    open_document(client, uri, source)
    [diagnostic] = (await published(client, uri, version=1)).diagnostics
    assert diagnostic.range.start.line == 3


# -- crash safety ----------------------------------------------------------------------------
async def test_crash_in_one_analysis_is_logged_and_the_server_keeps_serving(client: LanguageClient):
    # JSON can carry a lone surrogate ("\ud800"), and the engine cannot encode it to UTF-8: a real
    # input that makes the analysis raise. (Should the engine learn to take it, this test needs
    # another real trigger; tests/test_lsp_crash.py covers a raising rule independently.)
    uri = uri_for("surrogate.py")
    open_document(client, uri, 'import torch.nn as nn\ns = "\ud800"\nmodel = nn.DataParallel(model)\n')
    assert (await published(client, uri, version=1)).diagnostics == []
    error = await logged(client, f"analysis of {uri} crashed")
    assert error.type == types.MessageType.Error
    assert "UnicodeEncodeError" in error.message
    # The same server still analyses other documents (and this one, once the text is sane).
    replace_all(client, uri, "import torch.nn as nn\nmodel = nn.DataParallel(model)\n", version=2)
    [diagnostic] = (await published(client, uri, version=2)).diagnostics
    assert diagnostic.code == "DDP003"


# -- code actions ----------------------------------------------------------------------------
async def _open_and_get(client, name, text):
    uri = uri_for(name)
    open_document(client, uri, text)
    params = await published(client, uri, version=1)
    return uri, params.diagnostics


async def test_noqa_action_appends_to_the_existing_comment_and_silences_the_finding(client: LanguageClient):
    uri, [diagnostic] = await _open_and_get(client, "noqa.py", BUGGY)
    actions = await code_actions(client, uri, diagnostic.range)
    [noqa] = [a for a in actions if "noqa" in a.title]
    assert noqa.kind == types.CodeActionKind.QuickFix
    assert noqa.diagnostics[0].code == "DDP002"
    text = apply_text_edits(BUGGY, edits_for(noqa, uri))
    assert text.splitlines()[DDP002_ROW].endswith("# <- DDP002  # noqa: DDP002")
    replace_all(client, uri, text, version=2)
    assert (await published(client, uri, version=2)).diagnostics == []


async def test_noqa_action_merges_with_an_existing_noqa(client: LanguageClient):
    lines = BUGGY.splitlines(keepends=True)
    lines[DDP002_ROW] = lines[DDP002_ROW].replace("# <- DDP002", "# noqa: DDP001")
    source = "".join(lines)
    uri, [diagnostic] = await _open_and_get(client, "noqa_merge.py", source)
    actions = await code_actions(client, uri, diagnostic.range)
    [noqa] = [a for a in actions if "noqa" in a.title]
    text = apply_text_edits(source, edits_for(noqa, uri))
    assert text.splitlines()[DDP002_ROW].endswith("# noqa: DDP001, DDP002")
    replace_all(client, uri, text, version=2)
    assert (await published(client, uri, version=2)).diagnostics == []


async def test_apply_this_fix_action_fixes_the_finding(client: LanguageClient):
    uri, [diagnostic] = await _open_and_get(client, "fix_one.py", BUGGY)
    cursor = types.Range(start=diagnostic.range.start, end=diagnostic.range.start)
    actions = await code_actions(client, uri, cursor)
    [fix] = [a for a in actions if a.kind == types.CodeActionKind.QuickFix and "set_epoch" in a.title]
    assert fix.is_preferred  # a safe fix
    text = apply_text_edits(BUGGY, edits_for(fix, uri))
    assert text.splitlines()[DDP002_ROW + 1].strip() == "sampler.set_epoch(epoch)"
    replace_all(client, uri, text, version=2)
    assert (await published(client, uri, version=2)).diagnostics == []


async def test_fix_all_applies_every_safe_fix_and_leaves_unsafe_ones(client: LanguageClient):
    source = BUGGY + "\nmodel2 = nn.DataParallel(nn.Linear(2, 2))\n"  # DDP003: no fix
    uri, diagnostics = await _open_and_get(client, "fix_all.py", source)
    assert sorted(d.code for d in diagnostics) == ["DDP002", "DDP003"]
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    actions = await code_actions(client, uri, whole, only=[types.CodeActionKind.SourceFixAll])
    [fix_all] = actions
    assert fix_all.kind == "source.fixAll.ddplint"
    replace_all(client, uri, apply_text_edits(source, edits_for(fix_all, uri)), version=2)
    assert [d.code for d in (await published(client, uri, version=2)).diagnostics] == ["DDP003"]


async def test_unsafe_fix_is_offered_alone_but_not_in_fix_all(client: LanguageClient):
    uri, [diagnostic] = await _open_and_get(client, "unsafe.py", DDP001_BUGGY)
    assert diagnostic.code == "DDP001"
    actions = await code_actions(client, uri, diagnostic.range)
    titles = [a.title for a in actions]
    assert any(t.startswith("DDP001: ") and t.endswith("(unsafe)") for t in titles), titles
    assert not any(a.kind == "source.fixAll.ddplint" for a in actions)
    [unsafe] = [a for a in actions if a.title.endswith("(unsafe)")]
    assert not unsafe.is_preferred
    replace_all(client, uri, apply_text_edits(DDP001_BUGGY, edits_for(unsafe, uri)), version=2)
    # The new shuffling DistributedSampler now needs set_epoch: DDP001 gone, DDP002 (fixable) next.
    assert [d.code for d in (await published(client, uri, version=2)).diagnostics] == ["DDP002"]


async def test_no_actions_away_from_findings(client: LanguageClient):
    uri, _ = await _open_and_get(client, "no_actions.py", BUGGY)
    top = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    assert await code_actions(client, uri, top, only=[types.CodeActionKind.QuickFix]) is None


# -- hover -----------------------------------------------------------------------------------
async def _hover(client, uri, line, character):
    return await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)
        )
    )


async def test_hover_on_a_noqa_code_shows_that_rules_summary(client: LanguageClient):
    line = "model = nn.DataParallel(model)  # noqa: DDP002, DDP003"
    uri, _ = await _open_and_get(client, "hover.py", f"import torch.nn as nn\n{line}\n")
    on_ddp003 = await _hover(client, uri, 1, line.index("DDP003") + 2)
    assert RULES_BY_CODE["DDP003"].summary in on_ddp003.contents.value
    assert RULES_BY_CODE["DDP002"].summary not in on_ddp003.contents.value
    on_noqa = await _hover(client, uri, 1, line.index("noqa") + 1)
    assert RULES_BY_CODE["DDP002"].summary in on_noqa.contents.value
    assert RULES_BY_CODE["DDP003"].summary in on_noqa.contents.value
    assert await _hover(client, uri, 1, 2) is None  # on `model`: nothing to say


async def test_hover_on_a_bare_noqa_says_it_silences_everything(client: LanguageClient):
    line = "model = nn.DataParallel(model)  # noqa"
    uri, _ = await _open_and_get(client, "hover_bare.py", f"import torch.nn as nn\n{line}\n")
    hover = await _hover(client, uri, 1, line.index("noqa"))
    assert "every ddplint finding on this line" in hover.contents.value
    assert hover.range.start == types.Position(line=1, character=line.index("#"))
