"""analysis.syntax.parse_module: libcst's parse without per-node validation gives the same trees,
and leaves validation on for every node built afterwards."""

from __future__ import annotations

import threading
from pathlib import Path

import libcst as cst
import pytest

from case_files import CASE_FILES
from ddplint.analysis.syntax import parse_module

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*CASE_FILES, *ROOT.glob("examples/**/*.py"), ROOT / "ddplint/analysis/facts.py"])


def test_same_trees_as_libcst() -> None:
    assert len(SOURCES) > 40
    for path in SOURCES:
        data = path.read_bytes()
        ours, theirs = parse_module(data), cst.parse_module(data)
        assert ours.deep_equals(theirs), path
        assert ours.code == theirs.code == data.decode("utf-8"), path


def _an_invalid_node() -> None:
    cst.Name("not a name")  # libcst's validation refuses it


def test_nodes_built_after_a_parse_are_validated() -> None:
    parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        _an_invalid_node()


def test_validation_is_back_after_a_parse_that_fails() -> None:
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def broken(:\n")
    with pytest.raises(cst.CSTValidationError):
        _an_invalid_node()


def test_validation_is_back_after_parses_on_several_threads() -> None:
    source = "\n".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(300))
    threads = [threading.Thread(target=parse_module, args=(source,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with pytest.raises(cst.CSTValidationError):
        _an_invalid_node()


def test_invalid_python_is_still_refused() -> None:
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("x = = 1\n")
