"""The language server judges a file with its project, as `ddplint FILE` does (issue 20): a
loader built by a helper of another module, and that module changed on disk while the script
stays open."""

from __future__ import annotations

import atexit
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from lsp_client import initialize, open_document, published, replace_all, server_config
from test_same_answer import DATA_MODULE, IN_MAIN

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]  # starts a language server

PROJECT = Path(tempfile.mkdtemp(prefix="ddplint-lsp-project-"))
atexit.register(shutil.rmtree, PROJECT, True)
(PROJECT / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
(PROJECT / "data.py").write_text(textwrap.dedent(DATA_MODULE))
(PROJECT / "train.py").write_text(textwrap.dedent(IN_MAIN))
TRAIN_URI = (PROJECT / "train.py").as_uri()


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: LanguageClient):
    await initialize(lsp_client, PROJECT)
    yield
    await lsp_client.shutdown_session()


async def test_open_script_gets_the_finding_its_helper_module_causes(client: LanguageClient):
    open_document(client, TRAIN_URI, (PROJECT / "train.py").read_text())
    params = await published(client, TRAIN_URI, version=1)
    assert [d.code for d in params.diagnostics] == ["DDP002"]


async def test_helper_changed_on_disk_is_seen_at_the_next_analysis(client: LanguageClient):
    """data.py's sampler no longer shuffles: set_epoch does not matter any more."""
    text = (PROJECT / "train.py").read_text()
    (PROJECT / "data.py").write_text(textwrap.dedent(DATA_MODULE).replace("DistributedSampler(ds)", "DistributedSampler(ds, shuffle=False)"))
    after = len(client.published)
    replace_all(client, TRAIN_URI, text + "\n", version=2)
    params = await published(client, TRAIN_URI, version=2, after=after)
    assert [d.code for d in params.diagnostics] == []
