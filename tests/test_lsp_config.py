"""`ddplint lsp` follows `[tool.ddplint]`: read per document, read again when it changes."""

from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from lsp_client import EXAMPLES, eventually, initialize, logged, open_document, published, server_config

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]  # starts language servers

BUGGY = (EXAMPLES / "ddp002_missing_set_epoch_buggy.py").read_text()


@pytest_lsp.fixture(config=server_config(), scope="module")
async def client(lsp_client: LanguageClient):
    await initialize(lsp_client)
    yield
    await lsp_client.shutdown_session()


def write_config(path, body: str) -> None:
    path.write_text("[project]\nname = 'demo'\n\n[tool.ddplint]\n" + body)


def config_changed(client: LanguageClient, path, how=types.FileChangeType.Changed) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=path.as_uri(), type=how)])
    )


def _watchers(registration: types.Registration) -> list:
    options = registration.register_options  # the client side may leave it as plain JSON
    return options["watchers"] if isinstance(options, dict) else options.watchers


def codes(params: types.PublishDiagnosticsParams) -> list[str]:
    return sorted(d.code for d in params.diagnostics)


async def test_server_asks_to_watch_configuration_files(client: LanguageClient):
    [registration] = await eventually(
        lambda: [r for r in client.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    )
    watchers = [w["globPattern"] if isinstance(w, dict) else w.glob_pattern for w in _watchers(registration)]
    assert sorted(watchers) == ["**/ddplint.toml", "**/pyproject.toml"]


async def test_diagnostics_follow_the_configuration(client: LanguageClient, tmp_path):
    config = tmp_path / "pyproject.toml"
    write_config(config, 'select = ["DDP003"]\n')
    script = tmp_path / "train.py"
    script.write_text(BUGGY)
    uri = script.as_uri()

    open_document(client, uri, BUGGY)
    assert codes(await published(client, uri, version=1)) == []  # DDP002 not selected

    mark = len(client.published)
    write_config(config, 'select = ["DDP002", "DDP003"]\n')
    config_changed(client, config)
    assert codes(await published(client, uri, after=mark)) == ["DDP002"]

    mark = len(client.published)
    write_config(config, '[tool.ddplint.per-file-ignores]\n"train*.py" = ["DDP002"]\n')
    config_changed(client, config)
    assert codes(await published(client, uri, after=mark)) == []

    mark = len(client.published)
    write_config(config, 'extend-exclude = ["train.py"]\nignore = []\n')
    config_changed(client, config)
    assert codes(await published(client, uri, after=mark)) == []
    await logged(client, f"{uri} is excluded by the configuration")

    # Deleting the configuration: back to the defaults.
    mark = len(client.published)
    config.unlink()
    config_changed(client, config, types.FileChangeType.Deleted)
    assert codes(await published(client, uri, after=mark)) == ["DDP002"]


async def test_saving_a_configuration_file_also_counts(client: LanguageClient, tmp_path):
    # For clients that cannot watch files: didSave of a pyproject.toml they have open.
    config = tmp_path / "ddplint.toml"
    config.write_text('ignore = ["DDP002"]\n')
    script = tmp_path / "train.py"
    script.write_text(BUGGY)
    uri = script.as_uri()
    open_document(client, uri, BUGGY)
    assert codes(await published(client, uri, version=1)) == []

    mark = len(client.published)
    config.write_text('ignore = ["DDP003", "DDP004"]\n')
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=config.as_uri()))
    )
    assert codes(await published(client, uri, after=mark)) == ["DDP002"]


async def test_a_broken_configuration_is_reported_and_the_defaults_apply(client: LanguageClient, tmp_path):
    config = tmp_path / "pyproject.toml"
    write_config(config, 'select = ["NOPE123"]\n')
    script = tmp_path / "train.py"
    script.write_text(BUGGY)
    uri = script.as_uri()
    open_document(client, uri, BUGGY)
    assert codes(await published(client, uri, version=1)) == ["DDP002"]
    error = await logged(client, "configuration error")
    assert error.type == types.MessageType.Error and "NOPE123" in error.message
    assert any("NOPE123" in m.message and m.type == types.MessageType.Error for m in client.messages)
