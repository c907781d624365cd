"""The command line as users meet it: output shapes, exit codes, selection, rule docs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ddplint.cli import main

BUGGY = "import torch.nn as nn\nmodel = nn.DataParallel(model)\n"
CLEAN = "import torch\nmodel = torch.nn.Linear(2, 2)\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch):
    (tmp_path / "buggy.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(CLEAN)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_text_output_and_exit_code(project, capsys):
    assert main(["."]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("buggy.py:2:9: DDP003 ")
    assert out.count("\n") == 1
    assert "Found 1 finding" in err


def test_default_path_is_the_current_directory(project, capsys):
    assert main([]) == 1
    assert "buggy.py:2:9: DDP003" in capsys.readouterr().out


def test_clean_exit_zero(project, capsys):
    assert main(["clean.py"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "All checks passed" in err


def test_exit_zero_flag(project):
    assert main(["--exit-zero", "buggy.py"]) == 0


def test_check_subcommand_is_the_same(project, capsys):
    assert main(["check", "buggy.py"]) == 1
    assert "DDP003" in capsys.readouterr().out


def test_json_output_has_ruffs_shape(project, capsys):
    assert main(["--output-format", "json", "buggy.py"]) == 1
    (item,) = json.loads(capsys.readouterr().out)
    assert item["code"] == "DDP003"
    assert item["filename"] == "buggy.py"
    assert item["location"] == {"row": 2, "column": 9}
    assert item["end_location"] == {"row": 2, "column": 31}
    assert item["message"] == "nn.DataParallel drives every GPU from one process: use DistributedDataParallel"


def test_json_output_when_clean_is_an_empty_array(project, capsys):
    assert main(["--output-format", "json", "clean.py"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_select_and_ignore(project, capsys):
    assert main(["--select", "DDP001,DDP002", "buggy.py"]) == 0
    assert main(["--ignore", "DDP003", "buggy.py"]) == 0
    assert main(["--select", "DDP", "buggy.py"]) == 1


def test_unknown_selector_is_a_usage_error(project, capsys):
    assert main(["--select", "XYZ123", "buggy.py"]) == 2
    assert "unknown rule selector" in capsys.readouterr().err


def test_bad_flag_is_a_usage_error(project, capsys):
    assert main(["--output-format", "yaml", "buggy.py"]) == 2


def test_rule_command(capsys):
    assert main(["rule", "DDP002"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# missing-set-epoch (DDP002)")
    assert "## Why is this bad?" in out and "set_epoch" in out
    assert main(["rule", "missing-distributed-sampler"]) == 0
    assert "DDP001" in capsys.readouterr().out


def test_rule_listing_and_unknown_rule(capsys):
    assert main(["rule"]) == 0
    listing = capsys.readouterr().out
    assert all(code in listing for code in ("DDP001", "DDP002", "DDP003", "DDP004"))
    assert main(["rule", "DDP999"]) == 2


def test_syntax_error_file_reported_and_others_checked(project, capsys):
    (project / "a_broken.py").write_text("import torch.nn as nn\nnn.DataParallel(\n")
    assert main(["."]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("a_broken.py:") and " DDP000 " in lines[0]
    assert lines[1].startswith("buggy.py:2:9: DDP003")


def test_console_script_and_module_entry_point(project):
    result = subprocess.run([sys.executable, "-m", "ddplint", "buggy.py"], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stdout.startswith("buggy.py:2:9: DDP003")
    assert "Traceback" not in result.stderr
    version = subprocess.run([sys.executable, "-m", "ddplint", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("ddplint ")


# -- stdin ----------------------------------------------------------------------------------------------
SET_EPOCH_BUG = (
    "import torch.distributed as dist\n"
    "from torch.utils.data import DataLoader, DistributedSampler\n"
    "dist.init_process_group('gloo')\n"
    "sampler = DistributedSampler(ds)\n"
    "loader = DataLoader(ds, sampler=sampler)\n"
    "for epoch in range(3):\n"
    "    for batch in loader:\n"
    "        step(batch)\n"
)


def _stdin(cwd: Path, *args: str, text: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ddplint", *args], input=text, capture_output=True, text=True, cwd=cwd
    )


def test_stdin_with_a_filename(project):
    result = _stdin(project, "-", "--stdin-filename", "src/train.py", text=BUGGY)
    assert result.returncode == 1
    assert result.stdout.startswith("src/train.py:2:9: DDP003 ")
    assert _stdin(project, "-", text=BUGGY).stdout.startswith("-:2:9: DDP003 ")
    assert _stdin(project, "-", text=CLEAN).returncode == 0


def test_stdin_filename_picks_up_per_file_config(project):
    (project / "pyproject.toml").write_text('[tool.ddplint.per-file-ignores]\n"legacy/*" = ["DDP003"]\n')
    assert _stdin(project, "-", "--stdin-filename", "legacy/old.py", text=BUGGY).returncode == 0
    assert _stdin(project, "-", "--stdin-filename", "new.py", text=BUGGY).returncode == 1


def test_stdin_fix_prints_the_fixed_source(project):
    result = _stdin(project, "--fix", "-", "--stdin-filename", "train.py", text=SET_EPOCH_BUG)
    assert result.returncode == 0, result.stderr
    assert result.stdout == SET_EPOCH_BUG.replace(
        "for epoch in range(3):\n", "for epoch in range(3):\n    sampler.set_epoch(epoch)\n"
    )
    assert "1 fixed" in result.stderr
    unchanged = _stdin(project, "--fix", "-", text=BUGGY)
    assert unchanged.stdout == BUGGY and unchanged.returncode == 1  # DDP003 has no fix: source as it came


def test_stdin_diff(project):
    result = _stdin(project, "--diff", "-", "--stdin-filename", "train.py", text=SET_EPOCH_BUG)
    assert result.returncode == 1
    assert result.stdout.startswith("--- a/train.py\n+++ b/train.py\n")
    assert "+    sampler.set_epoch(epoch)\n" in result.stdout


def test_stdin_full_format_shows_the_line(project):
    result = _stdin(project, "--output-format", "full", "-", "--stdin-filename", "t.py", text=BUGGY)
    assert "2 | model = nn.DataParallel(model)" in result.stdout


def test_stdin_notebook(project):
    notebook = json.dumps(
        {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                    "source": ["%pip install torch\n", BUGGY]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    )
    result = _stdin(project, "-", "--stdin-filename", "nb.ipynb", text=notebook)
    assert result.stdout.startswith("nb.ipynb:cell 1:3:9: DDP003 ")
