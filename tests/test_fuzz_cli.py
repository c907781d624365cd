"""Random input through the whole CLI, in-process: random bytes as a Python file, random (often
malformed, sometimes deeply nested) notebooks, random pyproject.toml files (wrong types included).

Whatever comes in: exit 0, 1 or 2, no traceback and no "internal error", and a neighbouring
file's finding still reported in the same run. Only a configuration ddplint cannot use may stop
the run, and then as documented: exit 2 with one line naming the file.
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ddplint.cli import main

GOOD = "import torch.nn as nn\nmodel = nn.DataParallel(model)\n"  # DDP003 at 2:9
GOOD_FINDING = "good.py:2:9: DDP003"
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces of real training code, so that random files also reach the parser and the rules, not
# only the screens that turn plain noise away.
CODE_PIECES = [
    "import torch\n", "import torch.distributed as dist\n", "from torch.utils.data import DataLoader\n",
    "loader = DataLoader(ds, shuffle=True)\n", "for epoch in range(10):\n", "    for batch in loader:\n",
    "        loss.backward()\n", "if dist.get_rank() == 0:\n", "    dist.barrier()\n", "model = nn.DataParallel(m)\n",
    "x = (", ")\n", '"a" "b" "c"', "# \x00 comment\n", "\x00", "def f(:\n", "    ", "\t", "\r", "\\\n",
    "# -*- coding: latin-1 -*-\n", "\xef\xbb\xbf", "'''", '"', "lambda: " * 50, "[" * 300, "a" + ".b" * 400,
]


def run_cli(folder: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = main(["--no-cache", str(folder)])
    finally:
        sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def check_beside_good_file(name: str, content: bytes) -> tuple[int, str, str]:
    """The CLI over a folder holding `good.py` and `name` (which may lie in a subfolder)."""
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        (folder / "good.py").write_text(GOOD)
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
        if name.startswith("sub/"):
            (folder / "sub" / "train.py").write_text(GOOD)  # a file the configuration applies to
        code, out, err = run_cli(folder)
    event(f"exit {code}")
    assert code in (0, 1, 2)
    assert "Traceback" not in out + err and "internal error" not in out + err
    assert "please report" not in err  # a rule that crashed
    return code, out, err


def assert_good_file_checked(code: int, out: str) -> None:
    assert code == 1
    assert GOOD_FINDING in out


python_text = st.lists(st.sampled_from(CODE_PIECES) | st.text(max_size=20), max_size=30).map(
    lambda pieces: "".join(pieces).encode("utf-8", errors="surrogatepass")
)


@FUZZ
@given(st.binary(max_size=2000) | python_text)
def test_random_bytes_as_a_python_file(content):
    code, out, _ = check_beside_good_file("random.py", content)
    assert_good_file_checked(code, out)


comments = st.text(max_size=200).map(lambda text: "# " + "".join(" " if c in "\r\n" else c for c in text))
string_runs = st.integers(min_value=1, max_value=2000).map(lambda n: "x = (" + " ".join(['"a"'] * n) + ")")


@FUZZ
@given(comments | string_runs)
def test_what_valid_code_holds_costs_its_findings_nothing(line):
    """Any text in a comment (null bytes included) and any run of adjacent string literals, on the
    line before a finding: the finding is still reported."""
    content = f"import torch.nn as nn\nx = 1\n{line}\nmodel = nn.DataParallel(model)\n".encode()
    code, out, _ = check_beside_good_file("random.py", content)
    assert code == 1
    assert "random.py:4:9: DDP003" in out


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)
cells = st.fixed_dictionaries(
    {"cell_type": st.sampled_from(["code", "markdown", "raw", 5]), "source": st.text(max_size=40) | python_text.map(
        lambda b: b.decode("utf-8", "replace")) | st.lists(st.text(max_size=20), max_size=4) | json_values},
)
notebooks = st.fixed_dictionaries(
    {"cells": st.lists(cells, max_size=4) | json_values},
    optional={"metadata": json_values, "nbformat": json_values},
).map(json.dumps)


def deeply_nested(depth: int) -> str:
    return '{"cells": ' + "[" * depth + "]" * depth + "}"


@FUZZ
@given(
    notebooks
    | notebooks.map(lambda text: text[: len(text) // 2])  # cut short
    | st.integers(min_value=100, max_value=100_000).map(deeply_nested)
    | st.text(max_size=200)
)
def test_random_notebooks(text):
    code, out, _ = check_beside_good_file("random.ipynb", text.encode("utf-8", errors="surrogatepass"))
    assert_good_file_checked(code, out)


def toml_value(value: object) -> str:
    """A TOML literal for lists, strings, numbers and booleans; tables inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON's escapes are TOML's (a lone surrogate is invalid in both)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{json.dumps(key)} = {toml_value(item)}" for key, item in value.items()) + "}"


KEYS = ["select", "extend-select", "ignore", "exclude", "extend-exclude", "per-file-ignores", "selct", "tool", "ddplint"]
toml_values = st.recursive(
    st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["DDP", "DDP003", "ALL", "DDP999", "good.py", "*", ""]) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), children, max_size=3),
    max_leaves=12,
)
tables = st.dictionaries(st.sampled_from(KEYS), toml_values, max_size=4)
pyprojects = (
    tables.map(lambda table: "[tool.ddplint]\n" + "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in table.items()))
    | toml_values.map(lambda value: f"tool = {toml_value(value)}  # ddplint\n")
    | tables.map(lambda table: "[tool]\n" + "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in table.items()))
    | st.integers(min_value=100, max_value=100_000).map(lambda n: "[tool.ddplint]\nselect = " + "[" * n + "]" * n + "\n")
    | st.text(max_size=100).map(lambda text: "[tool.ddplint]\n" + text)
)


@FUZZ
@given(pyprojects)
def test_random_configurations(text):
    """The configuration governs `sub/` (its own file there may be ignored or excluded by it), not
    good.py beside it: unless the run stops with the documented error, good.py keeps its finding."""
    code, out, err = check_beside_good_file("sub/pyproject.toml", text.encode("utf-8", errors="surrogatepass"))
    if code == 2:  # a configuration ddplint cannot use: the documented error, naming the file
        assert err.startswith("ddplint: error: ") and "sub/pyproject.toml: " in err
        assert err.count("\n") == 1
    else:
        assert_good_file_checked(code, out)
