"""ruff's command-line habits, each with what it changes and what it leaves alone: ignore files,
`concise`, `-o`, `--show-fixes` / `--show-files` / `--show-settings`, `--watch`, unused-noqa
(DDP090) and `--add-noqa`, rule links in json / SARIF, `--diff` naming unsafe fixes, the docs."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import pytest

from ddplint import cli
from ddplint.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
DATA_PARALLEL = "import torch.nn as nn\nmodel = nn.DataParallel(model)\n"
# A shuffling DistributedSampler never given set_epoch (DDP002, a safe fix) in a distributed script.
NO_SET_EPOCH = """\
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("nccl")
sampler = DistributedSampler(ds)
loader = DataLoader(ds, sampler=sampler)
for epoch in range(3):
    for batch in loader:
        pass
"""
# torch.load without map_location: DDP008, whose only fix is unsafe.
LOAD_ON_GPU_ZERO = """\
import os
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
checkpoint = torch.load(args.resume)
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """A git repository (a `.git` folder: git itself is never run) as the working directory, with
    no user-wide git configuration in the way."""
    (tmp_path / ".git").mkdir()
    home = tmp_path.parent / f"{tmp_path.name}-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def shown_files(*args: str) -> list[str]:
    completed = subprocess.run(
        [sys.executable, "-m", "ddplint", "--show-files", *args], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.split()


def files_shown(capsys, *args: str) -> list[str]:
    assert main(["--show-files", *args]) == 0
    return capsys.readouterr().out.split()


# -- 1. ignore files ------------------------------------------------------------------------------
def test_gitignored_folder_is_not_checked_unless_asked(repo, capsys):
    write(repo / "train.py", DATA_PARALLEL)
    write(repo / "wandb" / "run-1" / "files" / "code" / "train.py", DATA_PARALLEL)
    write(repo / ".gitignore", "wandb/\n")
    assert files_shown(capsys, ".") == ["train.py"]
    assert main(["--no-cache", "."]) == 1
    assert "wandb" not in capsys.readouterr().out
    assert files_shown(capsys, "--no-respect-gitignore", ".") == ["train.py", "wandb/run-1/files/code/train.py"]


def test_named_files_and_folders_are_checked_even_when_ignored(repo, capsys):
    copy = write(repo / "outputs" / "train.py", DATA_PARALLEL)
    write(repo / ".gitignore", "outputs/\n")
    assert main(["--no-cache", str(copy.relative_to(repo))]) == 1
    assert "outputs/train.py:2:9: DDP003" in capsys.readouterr().out
    assert files_shown(capsys, "outputs") == ["outputs/train.py"]


def test_nested_gitignore_applies_to_its_own_subtree(repo, capsys):
    for name in ("gen_model.py", "sub/gen_model.py", "sub/deeper/gen_x.py", "sub/keep_gen.py", "sub/gen_keep.py"):
        write(repo / name, "x = 1\n")
    write(repo / "sub" / ".gitignore", "gen_*.py\n!gen_keep.py\n")
    assert files_shown(capsys, ".") == ["gen_model.py", "sub/gen_keep.py", "sub/keep_gen.py"]


def test_dot_ignore_outranks_gitignore_and_works_outside_a_repository(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "a.py", "x = 1\n")
    write(tmp_path / "b.py", "x = 1\n")
    write(tmp_path / ".gitignore", "*.py\n")
    write(tmp_path / ".ignore", "!a.py\n")
    assert files_shown(capsys, ".") == ["a.py"]


def test_gitignore_above_the_repository_does_not_apply(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    write(tmp_path / ".gitignore", "*.py\n")  # someone's home folder, not this repository's
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write(project / "train.py", "x = 1\n")
    monkeypatch.chdir(project)
    assert files_shown(capsys, ".") == ["train.py"]


def test_global_excludes_default_file_and_core_excludesfile(repo, capsys):
    write(repo / "outputs" / "a.py", "x = 1\n")
    write(repo / "scratch" / "b.py", "x = 1\n")
    write(repo / "train.py", "x = 1\n")
    config_home = Path(os.environ["XDG_CONFIG_HOME"])
    write(config_home / "git" / "ignore", "outputs/\n")
    assert files_shown(capsys, ".") == ["scratch/b.py", "train.py"]
    # core.excludesFile (in ~/.gitconfig) replaces the default file; `~` is the home folder.
    write(Path(os.environ["HOME"]) / "my-excludes", "scratch/\n")
    write(Path(os.environ["HOME"]) / ".gitconfig", '[user]\n\tname = x\n[core]\n\texcludesFile = "~/my-excludes"\n')
    assert files_shown(capsys, ".") == ["outputs/a.py", "train.py"]


def test_git_is_never_run(repo, capsys, monkeypatch):
    write(repo / ".gitignore", "wandb/\n")
    write(repo / "wandb" / "a.py", "x = 1\n")
    write(repo / "train.py", "x = 1\n")

    def refuse(*args, **kwargs):
        raise AssertionError(f"a process was started: {args}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "system", refuse)
    assert files_shown(capsys, ".") == ["train.py"]


# -- 2. concise ----------------------------------------------------------------------------------
def test_concise_is_the_default_and_text_its_alias(repo, capsys):
    write(repo / "train.py", DATA_PARALLEL)
    outputs = []
    for extra in ([], ["--output-format", "concise"], ["--output-format", "text"]):
        assert main(["--no-cache", *extra, "train.py"]) == 1
        outputs.append(capsys.readouterr().out)
    assert outputs[0].startswith("train.py:2:9: DDP003 ") and outputs[0] == outputs[1] == outputs[2]


# -- 3. -o, --show-fixes, --show-files, --show-settings, --watch ----------------------------------
def test_output_file_takes_the_findings(repo, capsys):
    write(repo / "train.py", DATA_PARALLEL)
    assert main(["--no-cache", "--output-format", "json", "-o", "report.json", "train.py"]) == 1
    assert capsys.readouterr().out == ""
    (item,) = json.loads((repo / "report.json").read_text())
    assert item["code"] == "DDP003"


def test_output_file_that_cannot_be_written_is_one_line(repo, capsys):
    write(repo / "train.py", DATA_PARALLEL)
    (repo / "taken").mkdir()
    assert main(["--no-cache", "-o", "taken", "train.py"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ddplint: error: cannot write taken:") and err.count("\n") == 1


def test_show_fixes_lists_applied_and_available_fixes(repo, capsys):
    write(repo / "train.py", NO_SET_EPOCH)
    assert main(["--no-cache", "--show-fixes", "train.py"]) == 1
    err = capsys.readouterr().err
    assert "Fixes available for 1 finding:\n- train.py:\n    1 × DDP002 (missing-set-epoch)" in err
    assert main(["--no-cache", "--fix", "--show-fixes", "train.py"]) == 0
    err = capsys.readouterr().err
    assert "Fixed 1 finding:\n- train.py:\n    1 × DDP002 (missing-set-epoch)" in err
    assert "sampler.set_epoch(epoch)" in (repo / "train.py").read_text()


def test_without_show_fixes_there_is_no_listing(repo, capsys):
    write(repo / "train.py", NO_SET_EPOCH)
    assert main(["--no-cache", "--fix", "train.py"]) == 0
    assert "× DDP002" not in capsys.readouterr().err


def test_show_files_applies_excludes_and_checks_nothing(repo, capsys):
    write(repo / "train.py", DATA_PARALLEL)
    write(repo / "legacy" / "old.py", DATA_PARALLEL)
    write(repo / "notebook.ipynb", "{}")
    assert main(["--show-files", "--extend-exclude", "legacy", "."]) == 0
    out, err = capsys.readouterr()
    assert out.split() == ["notebook.ipynb", "train.py"] and "DDP003" not in out + err


def test_show_settings_names_the_file_its_configuration_and_rules(repo, capsys):
    write(repo / "pyproject.toml", '[tool.ddplint]\nextend-select = ["DDP012"]\n[tool.ddplint.per-file-ignores]\n"scripts/*" = ["DDP003"]\n')
    write(repo / "scripts" / "run.py", DATA_PARALLEL)
    assert main(["--show-settings", "scripts"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Resolved settings for: scripts/run.py\n")
    assert f"Settings path: {repo / 'pyproject.toml'}" in out
    rules = re.search(r"^rules = (.*)$", out, flags=re.M).group(1)
    assert "'DDP012'" in rules and "'DDP003'" not in rules
    assert "per-file-ignores (this file) = ['DDP003']" in out


def test_watch_checks_again_after_a_change_and_ends_cleanly_on_ctrl_c(repo, capsys, monkeypatch):
    target = write(repo / "train.py", "x = 1\n")
    sleeps = []

    def pause() -> None:
        sleeps.append(1)
        if len(sleeps) == 1:
            target.write_text(DATA_PARALLEL)  # a different size: seen even within one mtime tick
        elif len(sleeps) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_pause", pause)
    assert main(["--no-cache", "--watch", "train.py"]) == 0
    out, err = capsys.readouterr()
    assert out.count("DDP003") == 1  # checked again once, after the change; not after the quiet poll
    assert err.count("All checks passed!") == 1 and err.count("checking again") == 1


@pytest.mark.slow
def test_watch_in_a_real_process_stops_on_sigint_without_a_traceback(repo):
    write(repo / "train.py", "x = 1\n")
    # Ctrl-C as a terminal delivers it: SIGINT at its default in ddplint's process, whatever the
    # test run inherited (a background job of a non-interactive shell starts with it ignored).
    process = subprocess.Popen(
        [sys.executable, "-m", "ddplint", "--no-cache", "--watch", "train.py"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        time.sleep(4.0)  # started, checked once, polling
        write(repo / "train.py", DATA_PARALLEL)
        time.sleep(4.0)  # seen and checked again
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert "DDP003" in out and "Traceback" not in err


# -- 4. DDP090 unused-noqa, --add-noqa ------------------------------------------------------------
NOQA_CASES = """\
import torch.nn as nn
model = nn.DataParallel(model)  # noqa: DDP003
other = nn.Linear(2, 2)  # noqa: DDP003, F401, DDP999, DDP003
more = nn.Linear(2, 2)  # noqa: DDP005
bare = nn.Linear(2, 2)  # noqa
ruff = nn.Linear(2, 2)  # noqa: E501
why = nn.Linear(2, 2)  # noqa: DDP012 kept for the old loader
"""


def test_unused_noqa_is_off_by_default(repo, capsys):
    write(repo / "train.py", NOQA_CASES)
    assert main(["--no-cache", "train.py"]) == 0
    assert "DDP090" not in capsys.readouterr().out


def test_unused_unknown_duplicate_and_non_enabled_codes_are_reported(repo, capsys):
    write(repo / "train.py", NOQA_CASES)
    assert main(["--no-cache", "--extend-select", "DDP090", "--output-format", "json", "train.py"]) == 1
    found = {item["location"]["row"]: item for item in json.loads(capsys.readouterr().out)}
    assert sorted(found) == [3, 4, 7]  # a used code, a bare noqa and another tool's code: not reported
    assert found[3]["message"] == "unused `noqa` directive (unused: DDP003; unknown: DDP999; duplicate: DDP003)"
    assert found[3]["name"] == "unused-noqa" and found[3]["severity"] == "warning"
    assert found[4]["message"] == "unused `noqa` directive (unused: DDP005)"
    assert found[7]["message"] == "unused `noqa` directive (non-enabled: DDP012)"


def test_unused_noqa_fix_keeps_used_and_foreign_codes_and_comments(repo, capsys):
    path = write(repo / "train.py", NOQA_CASES)
    assert main(["--no-cache", "--extend-select", "DDP090", "--fix", "train.py"]) == 0
    lines = path.read_text().splitlines()
    assert lines[1] == "model = nn.DataParallel(model)  # noqa: DDP003"
    assert lines[2] == "other = nn.Linear(2, 2)  # noqa: F401"
    assert lines[3] == "more = nn.Linear(2, 2)"
    assert lines[4:6] == ["bare = nn.Linear(2, 2)  # noqa", "ruff = nn.Linear(2, 2)  # noqa: E501"]
    assert lines[6] == "why = nn.Linear(2, 2)  # kept for the old loader"
    assert main(["--no-cache", "--extend-select", "DDP090", "train.py"]) == 0


def test_unused_noqa_from_the_configuration_and_file_level_noqa(repo, capsys):
    write(repo / "pyproject.toml", '[tool.ddplint]\nextend-select = ["DDP090"]\n')
    path = write(repo / "train.py", "import torch.nn as nn\nx = nn.Linear(2, 2)  # noqa: DDP003\n")
    assert main(["--no-cache", "train.py"]) == 1
    assert "DDP090" in capsys.readouterr().out
    path.write_text("# ddplint: noqa\n" + path.read_text())
    assert main(["--no-cache", "train.py"]) == 0


def test_add_noqa_silences_every_finding_and_keeps_comments(repo, capsys):
    source = (
        "import torch.nn as nn\n"
        "a = nn.DataParallel(a)  # the old way\n"
        "b = nn.DataParallel(b)  # noqa: F401\n"
        "c = nn.DataParallel(c)  # noqa\n"
        "d = nn.DataParallel(d)\n"
    )
    path = write(repo / "train.py", source)
    assert main(["--no-cache", "--add-noqa", "train.py"]) == 0
    assert "Added 3 noqa directives." in capsys.readouterr().err
    assert path.read_text().splitlines()[1:] == [
        "a = nn.DataParallel(a)  # the old way  # noqa: DDP003",
        "b = nn.DataParallel(b)  # noqa: F401, DDP003",
        "c = nn.DataParallel(c)  # noqa",
        "d = nn.DataParallel(d)  # noqa: DDP003",
    ]
    assert main(["--no-cache", "--extend-select", "DDP090", "train.py"]) == 0  # silenced, and each noqa used
    assert main(["--no-cache", "--add-noqa", "train.py"]) == 0
    assert "Added 0 noqa directives." in capsys.readouterr().err


def test_add_noqa_leaves_clean_files_and_string_rows_alone(repo, capsys):
    clean = write(repo / "clean.py", "import torch\nx = torch.nn.Linear(2, 2)\n")
    before = clean.read_bytes()
    assert main(["--no-cache", "--add-noqa", "clean.py"]) == 0
    assert clean.read_bytes() == before
    assert main(["--add-noqa", "--fix", "clean.py"]) == 2
    assert "cannot be combined" in capsys.readouterr().err


# -- 5. rule links -------------------------------------------------------------------------------
def test_json_and_sarif_link_each_rule_page(repo, capsys):
    write(repo / "train.py", DATA_PARALLEL)
    assert main(["--no-cache", "--output-format", "json", "train.py"]) == 1
    (item,) = json.loads(capsys.readouterr().out)
    page = Path(url2pathname(urlparse(item["url"]).path))
    assert item["url"].startswith("file://") and page.name == "DDP003.md"
    assert page.read_text().startswith("# data-parallel (DDP003)")
    assert main(["--no-cache", "--output-format", "sarif", "train.py"]) == 1
    rules = json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]["rules"]
    assert {rule["id"]: rule["helpUri"] for rule in rules}["DDP003"] == item["url"]


def test_docs_url_template_and_no_url_where_there_is_no_page(repo, capsys, monkeypatch):
    write(repo / "train.py", DATA_PARALLEL + "y = 1  # noqa: DDP001\n")
    monkeypatch.setenv("DDPLINT_DOCS_URL", "https://example.org/ddplint/{code}-{name}.html")
    assert main(["--no-cache", "--extend-select", "DDP090", "--output-format", "json-lines", "train.py"]) == 1
    items = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(i["code"], i["url"]) for i in items] == [
        ("DDP003", "https://example.org/ddplint/DDP003-data-parallel.html"), ("DDP090", None)
    ]


def test_concise_output_has_no_url(repo, capsys):
    write(repo / "train.py", DATA_PARALLEL)
    assert main(["--no-cache", "train.py"]) == 1
    assert "file://" not in capsys.readouterr().out


# -- 6. --diff and unsafe fixes ------------------------------------------------------------------
def test_diff_with_only_unsafe_fixes_says_how_to_get_them(repo, capsys):
    write(repo / "train.py", LOAD_ON_GPU_ZERO)
    assert main(["--no-cache", "--diff", "train.py"]) == 0  # nothing --diff would change (as before)
    out, err = capsys.readouterr()
    assert out == "" and "Would fix 0 findings (1 fix available with `--unsafe-fixes`)." in err
    assert main(["--no-cache", "--diff", "--unsafe-fixes", "train.py"]) == 1
    out, err = capsys.readouterr()
    assert 'map_location="cpu"' in out and "Would fix 1 finding.\n" in err


# -- 7, 8. docs ----------------------------------------------------------------------------------
def _check_options() -> set[str]:
    check = build_parser()._subparsers._group_actions[0].choices["check"]  # type: ignore[union-attr]
    return {option for action in check._actions for option in action.option_strings if option.startswith("--")}


def test_cli_table_names_every_check_option():
    table = (ROOT / "docs" / "cli.md").read_text()
    rows = set(re.findall(r"^\| `(--[\w-]+)", table, flags=re.M))
    assert _check_options() - {"--help"} <= rows
    assert "docs/cli.md" in (ROOT / "README.md").read_text()


def test_install_docs_promise_no_release_that_does_not_exist():
    readme = (ROOT / "README.md").read_text()
    assert "OWNER" not in readme and "rev: v0.1.0" not in readme
    assert 'pip install "ddplint @ git+<repository URL>@<commit>"' in readme


def test_rule_command_explains_the_meta_code(capsys):
    assert main(["rule", "DDP090"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("# unused-noqa (DDP090)") and "non-enabled" in page
    assert main(["rule", "DDP091"]) == 2


def test_unused_noqa_from_stdin(repo, capsys, monkeypatch):
    import io

    data = b"import torch.nn as nn\nx = nn.Linear(2, 2)  # noqa: DDP003\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["--no-cache", "--extend-select", "DDP090", "-", "--stdin-filename", "train.py"]) == 1
    assert "train.py:2:22: DDP090 [*] unused `noqa` directive (unused: DDP003)" in capsys.readouterr().out


def test_ignored_modules_still_inform_the_project_model(repo, capsys):
    """data.py is ignored (not checked), yet train.py, which imports its loader, is judged with it."""
    from loader_project import LOADER_MODULE, TRAINING_SCRIPT

    write(repo / "data.py", LOADER_MODULE)
    write(repo / "train.py", TRAINING_SCRIPT)
    write(repo / ".gitignore", "data.py\n")
    assert files_shown(capsys, ".") == ["train.py"]
    assert main(["--no-cache", "."]) == 1
    out = capsys.readouterr().out
    assert [line.split(":")[0] for line in out.splitlines()] == ["train.py"] and " DDP001 " in out


def test_patterns_git_cannot_use_are_passed_over(repo, capsys):
    write(repo / "a.py", "x = 1\n")
    write(repo / "b.py", "x = 1\n")
    write(repo / ".gitignore", "!\n[z-a]\ntrailing\\\nb.py\n")
    assert files_shown(capsys, ".") == ["a.py"]
