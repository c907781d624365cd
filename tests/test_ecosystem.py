"""The ecosystem check's bookkeeping (benchmarks/ecosystem/run.py) on a fake repository of our own:
findings keyed so that a line move keeps its verdict, and new / gone / moved reported apart."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

RUN_PY = Path(__file__).resolve().parent.parent / "benchmarks" / "ecosystem" / "run.py"


@pytest.fixture(scope="module")
def eco():
    spec = importlib.util.spec_from_file_location("ecosystem_run", RUN_PY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


TRAIN = """\
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
net = torch.nn.Linear(4, 4)
net = torch.nn.DataParallel(net)
net.load_state_dict(torch.load("resume.pt"))
out = net(torch.zeros(2, 4))
"""

RESUME = """\
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
weights = torch.load("last.pt")
"""


def make_checkouts(tmp_path: Path) -> tuple[Path, Path]:
    checkouts = tmp_path / "checkouts"
    project = checkouts / "someone__fake" / "src"
    project.mkdir(parents=True)
    (project / "train.py").write_text(TRAIN)
    (project / "resume.py").write_text(RESUME)
    repos = tmp_path / "repos.toml"
    repos.write_text('[[repo]]\nname = "someone/fake"\ncommit = "' + "0" * 40 + '"\nsubfolder = "src"\nkind = "tutorial"\n')
    return checkouts, repos


def run(eco, checkouts: Path, repos: Path, verdicts: Path, out: Path, *extra: str) -> list[dict]:
    findings = out.with_suffix(".json")
    args = [
        str(checkouts),
        "--repos",
        str(repos),
        "--verdicts",
        str(verdicts),
        "--out",
        str(out),
        "--json",
        str(findings),
    ]
    assert eco.main(args + list(extra) + ["--jobs", "1"]) == 0
    return json.loads(findings.read_text())


def judge(verdicts: Path, decisions: dict[tuple[str, str], str]) -> None:
    """Fill in the empty verdicts the first run wrote, by (path, code)."""
    entries = verdicts.read_text().split("[[finding]]")
    judged = [entries[0]]
    for entry in entries[1:]:
        for (path, code), verdict in decisions.items():
            if f'path = "{path}"' in entry and f'code = "{code}"' in entry:
                entry = entry.replace('verdict = ""', f'verdict = "{verdict}"').replace('reason = ""', 'reason = "ours"')
        judged.append(entry)
    verdicts.write_text("[[finding]]".join(judged))


def test_new_gone_and_moved_against_the_verdicts(eco, tmp_path):
    checkouts, repos = make_checkouts(tmp_path)
    verdicts = tmp_path / "verdicts.toml"

    first = run(eco, checkouts, repos, verdicts, tmp_path / "first.md", "--update-verdicts")
    seen = {(f["path"], f["code"], f["line"]) for f in first}
    assert seen == {
        ("src/train.py", "DDP003", 6),
        ("src/train.py", "DDP008", 7),
        ("src/resume.py", "DDP008", 5),
    }
    assert {f["status"] for f in first} == {"new"}
    assert verdicts.read_text().count('verdict = ""') == 3

    judge(
        verdicts,
        {
            ("src/train.py", "DDP003"): "true",
            ("src/train.py", "DDP008"): "false",
            ("src/resume.py", "DDP008"): "arguable",
        },
    )
    project = checkouts / "someone__fake" / "src"
    # Two lines above every finding of train.py: both move. resume.py maps its load: gone.
    # A new file with DataParallel: new.
    (project / "train.py").write_text('"""Trains."""\n\n' + TRAIN)
    (project / "resume.py").write_text(RESUME.replace('torch.load("last.pt")', 'torch.load("last.pt", map_location="cpu")'))
    (project / "wrap.py").write_text(TRAIN.replace('net.load_state_dict(torch.load("resume.pt"))\n', ""))

    second = run(eco, checkouts, repos, verdicts, tmp_path / "second.md")
    status = {(f["path"], f["code"]): (f["status"], f["verdict"], f["line"]) for f in second}
    assert status == {
        ("src/train.py", "DDP003"): ("moved", "true", 8),
        ("src/train.py", "DDP008"): ("moved", "false", 9),
        ("src/wrap.py", "DDP003"): ("new", "", 6),
    }
    report = (tmp_path / "second.md").read_text()
    assert "0 judged, 2 moved, 1 new (need a verdict), 1 gone." in report
    assert "Gone: 1 arguable." in report
    assert "[arguable] `someone/fake` src/resume.py:5 DDP008" in report  # the gone one, with its verdict
    assert "| DDP003 | 2 | 1 | 0 | 0 | 1 | 1.00 |" in report
    assert "| DDP008 | 1 | 0 | 1 | 0 | 0 | 0.00 |" in report


def finding(
    eco,
    line: int,
    text: str,
    code: str = "DDP008",
    path: str = "a.py",
    repo: str = "o/r",
):
    return eco.Finding(repo, path, code, line, text, "message")


def verdict(
    eco,
    line: int,
    text: str,
    value: str,
    occurrence: int = 0,
    code: str = "DDP008",
    repo: str = "o/r",
):
    return eco.Verdict(repo, "a.py", code, text, occurrence, line, value, "reason")


def test_identical_lines_are_told_apart_by_occurrence(eco):
    findings = eco.number_occurrences(
        [
            finding(eco, 30, "x = torch.load(p)"),
            finding(eco, 10, "x = torch.load(p)"),
            finding(eco, 20, "y = 1"),
        ]
    )
    assert [(f.line, f.occurrence) for f in findings] == [(30, 1), (10, 0), (20, 0)]
    verdicts = [
        verdict(eco, 10, "x = torch.load(p)", "true"),
        verdict(eco, 30, "x = torch.load(p)", "false", 1),
    ]
    result = eco.compare(findings, verdicts)
    assert sorted((f.line, v.verdict) for f, v in result.judged) == [
        (10, "true"),
        (30, "false"),
    ]
    assert [f.line for f in result.new] == [20]
    assert result.moved == [] and result.gone == []


def test_a_new_identical_line_above_does_not_take_the_old_verdict(eco):
    findings = eco.number_occurrences([finding(eco, 794, "if not skip:"), finding(eco, 1028, "if not skip:")])
    result = eco.compare(findings, [verdict(eco, 1028, "if not skip:", "false")])
    assert [(f.line, v.line) for f, v in result.judged] == [(1028, 1028)]
    assert [f.line for f in result.new] == [794]
    assert result.moved == [] and result.gone == []


def test_a_reanchored_finding_on_the_same_line_keeps_its_verdict(eco):
    result = eco.compare(
        [finding(eco, 12, "state = torch.load(path)")],
        [verdict(eco, 12, "torch.load(path)", "true")],
    )
    assert [(f.text, v.verdict) for f, v in result.moved] == [("state = torch.load(path)", "true")]
    assert result.new == [] and result.gone == []


def test_other_rules_and_repositories_not_run_do_not_match(eco):
    findings = [finding(eco, 5, "net = nn.DataParallel(net)", code="DDP003")]
    verdicts = [
        verdict(eco, 5, "net = nn.DataParallel(net)", "true", code="DDP005"),
        verdict(
            eco,
            5,
            "net = nn.DataParallel(net)",
            "true",
            code="DDP003",
            repo="other/repo",
        ),
    ]
    result = eco.compare(findings, verdicts, repos_run={"o/r"})
    assert [f.code for f in result.new] == ["DDP003"]
    assert eco.gone_breakdown(result) == "1 LOST (were true)"
    assert [v.code for v in result.gone] == ["DDP005"]  # the other repository was not run: not gone


def test_precision_leaves_arguable_and_unjudged_apart(eco):
    findings = eco.number_occurrences([finding(eco, n, f"line {n}") for n in range(1, 6)])
    verdicts = [
        verdict(eco, 1, "line 1", "true"),
        verdict(eco, 2, "line 2", "true"),
        verdict(eco, 3, "line 3", "false"),
        verdict(eco, 4, "line 4", "arguable"),
    ]
    rows = {row["code"]: row for row in eco.precision_rows(eco.compare(findings, verdicts), findings)}
    ddp008 = rows["DDP008"]
    assert (
        ddp008["true"],
        ddp008["false"],
        ddp008["arguable"],
        ddp008["unjudged"],
    ) == (2, 1, 1, 1)
    assert ddp008["precision"] == pytest.approx(2 / 3, abs=1e-3)


def test_verdicts_survive_a_round_trip_through_the_file(eco, tmp_path):
    original = [verdict(eco, 3, 'say("quote \\" and backslash \\\\")', "arguable", occurrence=2)]
    path = tmp_path / "verdicts.toml"
    path.write_text(eco.dump_verdicts(original))
    assert eco.load_verdicts(path) == original


def test_an_unknown_verdict_is_one_clear_line(eco, tmp_path):
    path = tmp_path / "verdicts.toml"
    path.write_text('[[finding]]\nrepo = "o/r"\npath = "a.py"\ncode = "DDP001"\ntext = "x"\nverdict = "maybe"\n')
    with pytest.raises(SystemExit, match="verdicts.toml: verdict 'maybe' for a.py is not one of"):
        eco.load_verdicts(path)


def test_a_notebook_finding_is_keyed_by_its_code_cell_line(eco, tmp_path):
    notebook = tmp_path / "nb.ipynb"
    cells = [
        {"cell_type": "markdown", "source": ["# title"]},
        {"cell_type": "code", "source": ["import torch\n"]},
        {"cell_type": "code", "source": ["x = 1\n", "  net = nn.DataParallel(net)\n"]},
    ]
    notebook.write_text(json.dumps({"cells": cells}))
    assert eco.notebook_cell_line(notebook, 2, 2) == "net = nn.DataParallel(net)"
    assert eco.notebook_cell_line(notebook, 3, 1) == ""  # no third code cell
