from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from case_files import is_case_data
from ddplint.engine import lint_source
from ddplint.rules import select_rules


def pytest_ignore_collect(collection_path: Path, config):
    """The corpus and each rule's `cases/` are test data (user scripts, some named like tests:
    `*_test.py`), linted by tests/test_corpus.py and never collected, so never imported, by pytest
    itself: not even when the folder is named on the command line."""
    return True if is_case_data(collection_path) else None


def findings(source: str, select=None) -> list[tuple[int, str]]:
    """(line, code) of every diagnostic ddplint reports on a snippet."""
    rules = select_rules(select) if select else select_rules()
    diagnostics = lint_source(textwrap.dedent(source).lstrip("\n"), "snippet.py", rules)
    return sorted((d.location.row, d.code) for d in diagnostics)


@pytest.fixture
def lint():
    return findings


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path_factory, monkeypatch):
    """Every test gets its own results cache, so no test reads another's results or writes a
    `.ddplint_cache/` into the checkout."""
    monkeypatch.setenv("DDPLINT_CACHE_DIR", str(tmp_path_factory.mktemp("ddplint_cache")))

