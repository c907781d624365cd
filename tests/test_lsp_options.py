"""`initializationOptions` and negotiated position encodings, end to end."""

from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp_client import EXAMPLES, apply_text_edits, edits_for, open_document, published, server_config

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]  # starts language servers

ROCKETS = "\U0001F680\U0001F680"


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: LanguageClient):
    capabilities = pytest_lsp.client_capabilities("visual-studio-code")
    capabilities.general = types.GeneralClientCapabilities(position_encodings=["utf-8", "utf-16"])
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            initialization_options={
                "docsUrl": "https://docs.example.org/ddplint/{code}.html", "unsafeFixes": True, "severity": "rule",
            },
        )
    )
    lsp_client.negotiated_encoding = result.capabilities.position_encoding
    yield
    await lsp_client.shutdown_session()


async def test_utf8_columns_when_the_client_prefers_utf8(client: LanguageClient):
    assert client.negotiated_encoding == types.PositionEncodingKind.Utf8
    uri = "file:///virtual/utf8.py"
    line = f'tag = "{ROCKETS}"; model = nn.DataParallel(model)'
    open_document(client, uri, f"import torch.nn as nn\n{line}\n")
    [diagnostic] = (await published(client, uri, version=1)).diagnostics
    # Each rocket is one code point and four UTF-8 bytes.
    assert diagnostic.range.start.character == line.index("nn.DataParallel") + 2 * 3
    assert diagnostic.severity == types.DiagnosticSeverity.Error  # severity "rule": DDP003's own level


async def test_docs_url_template_links_every_diagnostic(client: LanguageClient):
    uri = "file:///virtual/docs_url.py"
    open_document(client, uri, (EXAMPLES / "ddp002_missing_set_epoch_buggy.py").read_text())
    [diagnostic] = (await published(client, uri, version=1)).diagnostics
    assert diagnostic.code_description.href == "https://docs.example.org/ddplint/DDP002.html"


async def test_unsafe_fixes_option_puts_unsafe_fixes_into_fix_all(client: LanguageClient):
    uri = "file:///virtual/unsafe_all.py"
    source = (EXAMPLES / "ddp001_missing_sampler_buggy.py").read_text()
    open_document(client, uri, source)
    [diagnostic] = (await published(client, uri, version=1)).diagnostics
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll]),
        )
    )
    [fix_all] = actions
    assert fix_all.title == "ddplint: apply all fixes in this file"
    fixed = apply_text_edits(source, edits_for(fix_all, uri))
    assert "sampler=DistributedSampler(dataset" in fixed


async def test_half_typed_line_hides_no_finding_and_syntax_errors_are_off_by_default(client: LanguageClient):
    uri = "file:///virtual/half_typed.py"
    open_document(client, uri, "import torch.nn as nn\nprint(f'epoch {e\nmodel = nn.DataParallel(model)\n")
    [diagnostic] = (await published(client, uri, version=1)).diagnostics
    assert diagnostic.code == "DDP003" and diagnostic.range.start.line == 2
