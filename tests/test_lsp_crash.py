"""A rule that raises costs that rule's findings on that text; one that never returns costs that
one analysis; both are logged, neither takes the server down."""

from __future__ import annotations

import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from lsp_client import EXAMPLES, REPO, initialize, logged, open_document, published, server_config

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]  # starts language servers

BUGGY = (EXAMPLES / "ddp002_missing_set_epoch_buggy.py").read_text()
def broken_rule_server(mode: str) -> ClientServerConfig:
    stock = server_config()
    return ClientServerConfig(
        server_command=[sys.executable, str(REPO / "tests" / "lsp_broken_rule_server.py")],
        client_factory=stock.client_factory,
        server_env=dict(stock.server_env, DDPLINT_TEST_BROKEN_RULE=mode),
    )


@pytest_lsp.fixture(config=broken_rule_server("raise"), scope="module")
async def client(lsp_client: LanguageClient):
    await initialize(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=broken_rule_server("hang"), scope="module")
async def hang_client(lsp_client: LanguageClient):
    await initialize(lsp_client, analysisTimeoutS=5)
    yield
    await lsp_client.shutdown_session()


async def test_a_raising_rule_is_logged_and_the_other_rules_still_report(client: LanguageClient):
    uri = "file:///virtual/broken_rule.py"
    open_document(client, uri, BUGGY + "\nmodel2 = nn.DataParallel(nn.Linear(2, 2))\n")
    params = await published(client, uri, version=1)
    assert [d.code for d in params.diagnostics] == ["DDP002"]  # DDP003's finding is lost, DDP002's is not
    error = await logged(client, "internal error in DDP003")
    assert error.type == types.MessageType.Error
    assert "ZeroDivisionError" in error.message and uri in error.message
    # Still serving: the next document is analysed as usual.
    other = "file:///virtual/after_broken_rule.py"
    open_document(client, other, BUGGY)
    assert [d.code for d in (await published(client, other, version=1)).diagnostics] == ["DDP002"]


async def test_an_analysis_that_never_ends_is_stopped_and_the_next_one_runs(hang_client: LanguageClient):
    client = hang_client
    stuck = "file:///virtual/stuck.py"
    open_document(client, stuck, "import torch.nn as nn\nmodel = nn.DataParallel(nn.Linear(2, 2))\n")
    assert (await published(client, stuck, version=1)).diagnostics == []
    error = await logged(client, f"analysis of {stuck} crashed")
    assert "took longer than 5 s and was stopped" in error.message
    # A fresh analysis process serves the next document (DDP003 has nothing to say there).
    other = "file:///virtual/after_stuck.py"
    open_document(client, other, BUGGY)
    assert [d.code for d in (await published(client, other, version=1)).diagnostics] == ["DDP002"]
