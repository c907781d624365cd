"""Helpers that lint a snippet or a small project for the tests of several rules (tests/rules/)."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from pathlib import Path

from ddplint.cli import main
from ddplint.engine import lint_source
from ddplint.rules import RULES_BY_CODE, select_rules
from ddplint.rules.base import expected_marks

# -- rows of one rule's findings in a snippet ----------------------------------------------------


def finding_rows(source: str, code: str) -> list[int]:
    """Rows of `code`'s findings in the source."""
    text = textwrap.dedent(source).lstrip("\n")
    return [d.location.row for d in lint_source(text, "train.py", [RULES_BY_CODE[code]])]


# -- a distributed script's head; one project linted as a folder, a file and stdin -------------------

SAMPLER_HEAD = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

dist.init_process_group("nccl")
"""


def sampler_findings(body: str, code: str) -> list:
    source = SAMPLER_HEAD + textwrap.dedent(body)
    return [d for d in lint_source(source, "train.py", select_rules([code])) if d.code == code]


# -- cross-module shapes: the same answer from `ddplint .`, `ddplint FILE` and stdin ---------------


def _json_findings(argv: list[str], capsys, monkeypatch, stdin: bytes = b"") -> list[dict]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    capsys.readouterr()
    main(["--no-cache", "--select", "DDP001,DDP002", "--output-format", "json", *argv])
    return json.loads(capsys.readouterr().out or "[]")


def findings_every_way(tmp_path: Path, monkeypatch, capsys, files: dict[str, str]) -> list[tuple[int, str, str]]:
    """train.py's findings, asserted identical however ddplint is run: (row, code, message)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    monkeypatch.chdir(tmp_path)
    source = (tmp_path / "train.py").read_bytes()
    ways = {
        "folder": _json_findings(["."], capsys, monkeypatch),
        "file": _json_findings(["train.py"], capsys, monkeypatch),
        "stdin": _json_findings(["-", "--stdin-filename", "train.py"], capsys, monkeypatch, source),
    }
    answers = {
        way: sorted((f["location"]["row"], f["code"], f["message"]) for f in found if Path(f["filename"]).name == "train.py")
        for way, found in ways.items()
    }
    assert answers["file"] == answers["folder"] == answers["stdin"], answers
    return answers["folder"]


# -- each finding's row, message and why in a snippet ------------------------------------------------


def rows_and_messages(source: str, code: str) -> list[tuple[int, str]]:
    """(row, the message and the finding's why, as `--output-format full` shows them)."""
    diagnostics = lint_source(textwrap.dedent(source).lstrip("\n"), "snippet.py", select_rules([code]))
    return sorted((d.location.row, f"{d.message}\n{d.explanation}") for d in diagnostics if d.code == code)


# -- findings marked `# <- CODE` in a snippet; the line holding a text -------------------------------


def marked_findings(source: str) -> list[tuple[int, str]]:
    """(row, code) of each `# <- CODE` mark, rows counted as the `lint` fixture counts them."""
    return sorted(expected_marks(source.lstrip("\n")))


def line_of(source: str, text: str) -> int:
    """The row (as the `lint` fixture counts them) of the first line holding `text`."""
    return next(n for n, line in enumerate(source.lstrip("\n").splitlines(), 1) if text in line)


# -- a small project on disk -------------------------------------------------------------------------


def write_files(root, files):
    """Each file (its path under `root` -> its text, dedented) written, folders made as needed."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


PLAIN_DATA_MODULE = """
    from torch.utils.data import DataLoader

    def build_loader(dataset, batch_size):
        return DataLoader(dataset, batch_size=batch_size, shuffle=True)
    """
