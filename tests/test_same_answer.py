"""One answer per file, however ddplint is run (issue 20, "one project model").

A file's findings depend on its own text and on what it imports from its project (the folder
holding pyproject.toml / setup.cfg / .git above it), never on which other files were named on the
command line, on the rules selected, or on whether the text came from disk or stdin. These tests
run the same files every way a user can and compare the findings.
"""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from case_files import copy_case_files
from ddplint.cli import main
from same_answer_support import concise_findings, findings_by_file, fix_difference, lsp_findings, shown_fixes

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# The repro, in our words: the sampler is built by a helper of another module, the epoch
# loop is in the entry script, and nobody calls set_epoch.
DATA_MODULE = """\
    from torch.utils.data import DataLoader
    from torch.utils.data.distributed import DistributedSampler


    def make_loader(ds, bs):
        return DataLoader(ds, batch_size=bs, sampler=DistributedSampler(ds))
    """
IN_MAIN = """\
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    from data import make_loader


    def main():
        dist.init_process_group("nccl")
        ds = torch.utils.data.TensorDataset(torch.randn(100, 3))
        loader = make_loader(ds, 8)
        model = DDP(torch.nn.Linear(3, 1))
        for epoch in range(10):
            for (x,) in loader:
                model(x).sum().backward()


    if __name__ == "__main__":
        main()
    """
AT_MODULE_LEVEL = """\
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    from data import make_loader

    dist.init_process_group("nccl")
    ds = torch.utils.data.TensorDataset(torch.randn(100, 3))
    loader = make_loader(ds, 8)
    model = DDP(torch.nn.Linear(3, 1))
    for epoch in range(10):
        for (x,) in loader:
            model(x).sum().backward()
    """


def _run_json(argv: list[str], capsys, monkeypatch, stdin: bytes = b"") -> list[dict]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    capsys.readouterr()
    main(["--no-cache", "--output-format", "json", *argv])
    return json.loads(capsys.readouterr().out or "[]")


def _keys(found: list[dict], name: str) -> list[tuple[int, int, str]]:
    return sorted(
        (f["location"]["row"], f["location"]["column"], f["code"]) for f in found if Path(f["filename"]).name == name
    )


def _make_project(tmp_path: Path, train: str) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "data.py").write_text(textwrap.dedent(DATA_MODULE))
    (tmp_path / "train.py").write_text(textwrap.dedent(train))
    return tmp_path


@pytest.mark.parametrize("train", [IN_MAIN, AT_MODULE_LEVEL], ids=["in-main", "module-level"])
def test_helper_built_sampler_is_reported_every_way(tmp_path, monkeypatch, capsys, train):
    project = _make_project(tmp_path, train)
    monkeypatch.chdir(project)
    source = (project / "train.py").read_bytes()
    ways = {
        "folder": _run_json(["."], capsys, monkeypatch),
        "file": _run_json(["train.py"], capsys, monkeypatch),
        "stdin": _run_json(["-", "--stdin-filename", "train.py"], capsys, monkeypatch, source),
        "one rule selected": _run_json(["--select", "DDP002", "train.py"], capsys, monkeypatch),
    }
    answers = {way: _keys(found, "train.py") for way, found in ways.items()}
    assert all(codes == answers["folder"] for codes in answers.values()), answers
    assert [code for _, _, code in answers["folder"]] == ["DDP002"]


@pytest.mark.parametrize("train", [IN_MAIN, AT_MODULE_LEVEL], ids=["in-main", "module-level"])
def test_fix_and_diff_see_what_the_check_sees(tmp_path, monkeypatch, capsys, train):
    """The pre-commit check hook (`ddplint FILES`) and the fix hook (`ddplint --fix FILES`) agree:
    the fix hook adds the set_epoch call the check asks for, named with or without data.py."""
    project = _make_project(tmp_path, train)
    monkeypatch.chdir(project)
    capsys.readouterr()
    assert main(["--no-cache", "--diff", "train.py"]) == 1
    assert "set_epoch(epoch)" in capsys.readouterr().out
    assert main(["--no-cache", "--fix", "train.py", "data.py"]) == 0
    assert "set_epoch(epoch)" in (project / "train.py").read_text()
    assert _run_json(["train.py"], capsys, monkeypatch) == []


def _corpus_project(tmp_path: Path) -> tuple[Path, list[str]]:
    """Every case file and example in one project folder, and their names in it."""
    project = tmp_path / "project"
    copy_case_files(project)
    shutil.copytree(EXAMPLES, project / "examples", ignore=shutil.ignore_patterns("*.md"))
    (project / "pyproject.toml").write_text("[project]\nname = 'copy'\n")
    files = sorted(p.relative_to(project).as_posix() for p in project.rglob("*.py"))
    assert len(files) > 100
    return project, files


@pytest.mark.slow
def test_corpus_and_examples_same_findings_alone_in_folder_and_on_stdin(tmp_path, monkeypatch, capsys):
    """Every case file and example: checked as part of its folder, alone, and from stdin
    under its own name, the findings are the same."""
    project, files = _corpus_project(tmp_path)
    monkeypatch.chdir(project)
    whole = findings_by_file(_run_json(["."], capsys, monkeypatch))
    differences = []
    for name in files:
        expected = whole.get(name, [])
        alone = findings_by_file(_run_json([name], capsys, monkeypatch)).get(name, [])
        piped = _run_json(["-", "--stdin-filename", name], capsys, monkeypatch, (project / name).read_bytes())
        from_stdin = findings_by_file(piped).get(name, [])
        if not expected == alone == from_stdin:
            differences.append((name, expected, alone, from_stdin))
    assert differences == []


@pytest.mark.slow
def test_corpus_and_examples_same_findings_in_the_language_server(tmp_path, monkeypatch, capsys):
    """The language server opened on the project publishes for each file what `ddplint .` reports."""
    project, files = _corpus_project(tmp_path)
    monkeypatch.chdir(project)
    whole = findings_by_file(_run_json(["."], capsys, monkeypatch))
    assert sum(map(len, whole.values())) > 100
    published = asyncio.run(lsp_findings(project, files))
    differences = [(name, whole.get(name, []), published[name]) for name in files if whole.get(name, []) != published[name]]
    assert differences == []


@pytest.mark.slow
def test_corpus_and_examples_fixed_plus_left_is_what_the_check_reports(tmp_path, monkeypatch, capsys):
    """`--fix --unsafe-fixes .`: per file, the findings fixed plus those left are the ones
    `ddplint .` reported (same_answer_support.fix_difference says how they are compared)."""
    project, files = _corpus_project(tmp_path)
    monkeypatch.chdir(project)
    reported = findings_by_file(_run_json(["."], capsys, monkeypatch))
    main(["--no-cache", "--fix", "--unsafe-fixes", "--show-fixes", "."])
    out, err = capsys.readouterr()
    left, fixed = concise_findings(out), shown_fixes(err)
    assert sum(map(len, left.values())) > 100
    assert sum(sum(counts.values()) for counts in fixed.values()) > 10
    differences = {}
    for name in files:
        if (difference := fix_difference(reported.get(name, []), left.get(name, []), fixed.get(name, Counter()))):
            differences[name] = difference
    assert differences == {}


@pytest.mark.slow
def test_examples_fix_the_same_alone_and_with_their_folder(tmp_path, monkeypatch, capsys):
    """`--diff --unsafe-fixes FILE` proposes for each example exactly what the folder run does."""
    shutil.copytree(EXAMPLES, tmp_path / "examples", ignore=shutil.ignore_patterns("*.md"))
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'copy'\n")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    main(["--no-cache", "--diff", "--unsafe-fixes", "examples"])
    together = capsys.readouterr().out
    assert "set_epoch" in together
    for script in sorted((tmp_path / "examples").rglob("*.py")):
        name = str(script.relative_to(tmp_path))
        main(["--no-cache", "--diff", "--unsafe-fixes", name])
        alone = capsys.readouterr().out
        assert alone in together, name


# DDP001's fix replaces `shuffle=True` with a DistributedSampler; with a leftover `sampler=None`
# beside it the call would name `sampler` twice, which parses but does not compile.
LEFTOVER_SAMPLER_NONE = """\
    import torch.distributed as dist
    from torch.utils.data import DataLoader

    from data import dataset

    dist.init_process_group("nccl")
    loader = DataLoader(dataset, batch_size=32, shuffle=True, sampler=None)
    for epoch in range(10):
        for batch in loader:
            pass
    """


def test_fix_never_writes_what_the_check_would_call_broken(tmp_path, monkeypatch, capsys):
    """Found by benchmarks/same_answer.py's --fix comparison on the case files: the fixed file
    had a DDP000 that the check never reported. A round that no longer compiles is dropped: the
    file keeps its text and its finding, so fixed + left is still what the check reported."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "data.py").write_text("dataset = list(range(100))\n")
    (tmp_path / "train.py").write_text(textwrap.dedent(LEFTOVER_SAMPLER_NONE))
    monkeypatch.chdir(tmp_path)
    reported = findings_by_file(_run_json(["train.py"], capsys, monkeypatch))
    assert [code for code, *_ in reported["train.py"]] == ["DDP001"]
    main(["--no-cache", "--fix", "--unsafe-fixes", "--show-fixes", "train.py"])
    out, err = capsys.readouterr()
    compile((tmp_path / "train.py").read_text(), "train.py", "exec")
    assert concise_findings(out) == reported
    assert shown_fixes(err) == {}


def test_a_fix_round_that_no_longer_compiles_is_dropped():
    """The fix loop's own guard, for any rule: an edit that parses but does not compile (a keyword
    named twice) is never kept; a file that did not compile before may still be fixed."""
    from ddplint.diagnostics import Diagnostic, Edit, Fix, Location
    from ddplint.fix import fix_until_stable

    def offering(column: int):
        def lint(text: str) -> list[Diagnostic]:
            if "sampler=DS" in text:
                return []
            at = Location(1, column)
            edit = Edit(", sampler=DS", at, at)
            return [Diagnostic("DDP001", "m", "t.py", at, at, Fix("pass a sampler", (edit,), "unsafe"))]
        return lint

    compiles = "f(x, sampler=None)\n"
    assert fix_until_stable(compiles, offering(18), unsafe=True).source == compiles
    assert fix_until_stable("f(x)\n", offering(4), unsafe=True).source == "f(x, sampler=DS)\n"
    already_broken = "f(x)\nreturn 1\n"  # `return` outside a function: a compiler error only
    assert fix_until_stable(already_broken, offering(4), unsafe=True).source == "f(x, sampler=DS)\nreturn 1\n"


def test_a_module_whose_summary_fails_costs_only_its_offers(tmp_path, monkeypatch, capsys):
    """A bug in summarising one module (simulated) leaves the other files' findings intact."""
    import ddplint.analysis.summaries as summaries_module

    def broken(facts, name):
        raise ValueError("summary bug")

    project = _make_project(tmp_path, IN_MAIN)
    (project / "other.py").write_text("import torch.nn as nn\nmodel = nn.DataParallel(net)\n")
    monkeypatch.setattr(summaries_module, "summarise", broken)
    monkeypatch.chdir(project)
    found = _run_json(["."], capsys, monkeypatch)
    assert [(Path(f["filename"]).name, f["code"]) for f in found] == [("other.py", "DDP003")]
