"""docs/editors.md stays true: its snippets parse, and the settings it documents are the ones the
server reads."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from ddplint.lsp.server import DEFAULT_DEBOUNCE_MS, Options
from ddplint.lsp.worker import DEFAULT_TIMEOUT_S

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EDITORS = (Path(__file__).resolve().parents[1] / "docs" / "editors.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", EDITORS, flags=re.S)


@pytest.mark.parametrize("snippet", blocks("json"))
def test_json_snippets_parse(snippet):
    json.loads(snippet)


@pytest.mark.parametrize("snippet", blocks("toml"))
def test_toml_snippets_parse_and_start_ddplint_lsp(snippet):
    server = tomllib.loads(snippet)["language-server"]["ddplint"]
    assert [server["command"], *server["args"]] == ["ddplint", "lsp"]


def test_every_editor_snippet_starts_ddplint_lsp():
    snippets = blocks("json") + blocks("lua") + blocks("toml") + blocks("elisp")
    starting = [s for s in snippets if re.search(r'"ddplint"[,\s]*(?:\]|\s)*[^\n]*"lsp"', s)]
    assert len(blocks("lua")) == 2 and len(blocks("elisp")) == 1
    assert len(starting) == 2 + 1 + 1  # Neovim twice, Helix, Emacs (VS Code's extension starts it itself)


def documented_settings() -> dict[str, str]:
    section = EDITORS.split("## Settings", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \|", section, flags=re.M)
    return {key: default.strip() for key, default in rows}


def test_documented_settings_are_the_ones_the_server_reads():
    settings = documented_settings()
    assert set(settings) == {"debounceMs", "unsafeFixes", "docsUrl", "analysisTimeoutS", "showSyntaxErrors", "severity"}
    assert settings["debounceMs"] == f"`{DEFAULT_DEBOUNCE_MS:g}`"
    assert settings["showSyntaxErrors"] == f"`{str(Options().show_syntax_errors).lower()}`"
    assert settings["analysisTimeoutS"] == f"`{DEFAULT_TIMEOUT_S:g}`"
    assert settings["severity"] == f'`"{Options().severity}"`'
    options = Options()
    options.update(
        {"debounceMs": 7, "unsafeFixes": True, "docsUrl": "https://x/{code}", "analysisTimeoutS": 9,
         "showSyntaxErrors": True, "severity": "rule"},
        log=None,
    )
    assert (options.debounce_ms, options.unsafe_fixes, options.docs_url, options.analysis_timeout_s) == (
        7.0, True, "https://x/{code}", 9.0,
    )
    assert options.show_syntax_errors is True
    assert options.severity == "rule"
