"""Helpers for driving `ddplint lsp` over stdio with pytest-lsp's real client."""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable, Optional

import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
# Rule pages are written under $XDG_CACHE_HOME: keep the tests out of the user's cache.
CACHE_HOME = Path(tempfile.gettempdir(), f"ddplint-lsp-tests-{os.getpid()}")
atexit.register(shutil.rmtree, CACHE_HOME, True)
# Generous: the machine is shared. Only a hang guard, never a latency assertion.
WAIT = 60.0


def _record_publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
    params.diagnostics = list(params.diagnostics)  # the converter hands over a tuple
    client.published.append(params)
    client.diagnostics[params.uri] = params.diagnostics


def _record_registration(client: LanguageClient, params: types.RegistrationParams) -> None:
    client.registrations.extend(params.registrations)


def make_client() -> LanguageClient:
    """pytest-lsp's client, but keeping every publishDiagnostics with its version (the stock one
    keeps only the latest diagnostics) and accepting capability registrations."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []
    client.registrations = []
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _record_publish
    features[types.CLIENT_REGISTER_CAPABILITY] = _record_registration
    register_lsp_features(client, features)
    return client


def server_config(*extra_args: str) -> ClientServerConfig:
    env = dict(os.environ, XDG_CACHE_HOME=str(CACHE_HOME))
    return ClientServerConfig(
        server_command=[sys.executable, "-m", "ddplint", "lsp", *extra_args],
        client_factory=make_client,
        server_env=env,
    )


async def initialize(client: LanguageClient, root: Optional[Path] = None, **init_options) -> types.InitializeResult:
    capabilities = pytest_lsp.client_capabilities("visual-studio-code")
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri() if root else None,
            initialization_options=init_options or None,
        )
    )


def open_document(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )


def replace_all(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def insert(client: LanguageClient, uri: str, version: int, line: int, character: int, text: str) -> None:
    at = types.Position(line=line, character=character)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text=text)],
        )
    )


async def published(
    client: LanguageClient, uri: str, version: Optional[int] = None, after: int = 0,
    where: Callable[[types.PublishDiagnosticsParams], bool] = lambda p: True,
) -> types.PublishDiagnosticsParams:
    """The first publishDiagnostics for `uri` (at `version`, if given) among those received from
    index `after` on, waiting for it if it has not arrived yet."""

    def match():
        for params in client.published[after:]:
            if params.uri == uri and (version is None or params.version == version) and where(params):
                return params
        return None

    async def poll():
        while (found := match()) is None:
            await asyncio.sleep(0.01)
        return found

    return await asyncio.wait_for(poll(), WAIT)


async def eventually(condition: Callable[[], object]):
    """Wait until `condition()` is truthy and return its value (hang guard: WAIT seconds)."""

    async def poll():
        while not (value := condition()):
            await asyncio.sleep(0.01)
        return value

    return await asyncio.wait_for(poll(), WAIT)


async def logged(client: LanguageClient, needle: str) -> types.LogMessageParams:
    async def poll():
        while True:
            for message in client.log_messages:
                if needle in message.message:
                    return message
            await asyncio.sleep(0.01)

    return await asyncio.wait_for(poll(), WAIT)


def analyses_of(client: LanguageClient, uri: str) -> int:
    """How many analyses the server reported for `uri` (it logs one line per analysis)."""
    return sum(1 for m in client.log_messages if m.message.startswith(f"ddplint: analysed {uri} "))


# -- applying edits the way an editor does, independently of the server's own position code ----
def _offset(text: str, position: types.Position) -> int:
    lines = text.split("\n")
    before = sum(len(line) + 1 for line in lines[: position.line])
    utf16 = lines[position.line].encode("utf-16-le")[: 2 * position.character]
    return before + len(utf16.decode("utf-16-le"))


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    spans = sorted(((_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in edits), reverse=True)
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def edits_for(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    edit = action.edit
    if edit.document_changes:
        return [e for change in edit.document_changes if change.text_document.uri == uri for e in change.edits]
    return list(edit.changes[uri])
