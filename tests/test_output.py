"""Output formats as tools and people read them: full, json (with fixes), json-lines, SARIF 2.1.0
(validated against the official schema), GitHub annotations, statistics, colour rules."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

from ddplint.cli import main
from ddplint.diagnostics import Diagnostic, Location
from ddplint.output import FORMATTERS, format_github, format_statistics, use_color

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))

# DDP002 (with a safe fix), DDP001 (with an unsafe fix) and DDP003 (no fix) in one file.
TRAIN = """\
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler

dist.init_process_group("gloo")
model = nn.DataParallel(model)
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, batch_size=32, sampler=sampler)
extra_loader = DataLoader(train_set, batch_size=32, shuffle=True)
for epoch in range(10):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "clean.py").write_text("import torch\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_text_marks_safe_fixes_and_counts_them(project, capsys):
    code, out, err = run(capsys, "train.py")
    assert code == 1
    lines = out.splitlines()
    assert [line.split()[1] for line in lines] == ["DDP003", "DDP001", "DDP002"]
    assert "DDP002 [*] " in lines[2] and "[*]" not in lines[0] + lines[1]
    assert "[*] 1 fixable with the `--fix` option." in err
    assert "(1 hidden fix can be enabled with the `--unsafe-fixes` option.)" in err
    _, out, err = run(capsys, "--unsafe-fixes", "train.py")
    assert "DDP001 [*] " in out and "[*] 2 fixable with `--fix --unsafe-fixes`." in err


def test_full_shows_the_line_a_caret_under_the_span_and_the_hint(project, capsys):
    code, out, _ = run(capsys, "--output-format", "full", "--select", "DDP003", "train.py")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("train.py:6:9: DDP003 ")
    assert lines[2] == "6 | model = nn.DataParallel(model)"
    assert lines[3] == "  |         " + "^" * len("nn.DataParallel(model)")
    assert lines[0].endswith("DDP003 nn.DataParallel drives every GPU from one process: use DistributedDataParallel")
    assert lines[5].startswith("  = why: nn.DataParallel drives all GPUs from one process: GPU 0 scatters")
    assert lines[6].startswith("  = help: Launch one process per GPU")


def test_full_names_the_fix_when_there_is_one(project, capsys):
    _, out, _ = run(capsys, "--output-format", "full", "--select", "DDP002", "train.py")
    assert "= fix (safe): Call `sampler.set_epoch(epoch)` at the start of each epoch" in out


def test_json_includes_the_fix_in_ruffs_shape(project, capsys):
    _, out, _ = run(capsys, "--output-format", "json", "--select", "DDP002", "train.py")
    (item,) = json.loads(out)
    assert item["code"] == "DDP002" and item["cell"] is None
    assert item["location"] == {"row": 10, "column": 1}
    assert item["fix"] == {
        "applicability": "safe",
        "message": "Call `sampler.set_epoch(epoch)` at the start of each epoch",
        "edits": [
            {
                "content": "    sampler.set_epoch(epoch)\n",
                "location": {"row": 11, "column": 1},
                "end_location": {"row": 11, "column": 1},
            }
        ],
    }


def test_unsafe_fixes_are_shown_only_when_asked_for(project, capsys):
    _, out, _ = run(capsys, "--output-format", "json", "--select", "DDP001", "train.py")
    assert json.loads(out)[0]["fix"] is None
    _, out, _ = run(capsys, "--output-format", "json", "--select", "DDP001", "--unsafe-fixes", "train.py")
    fix = json.loads(out)[0]["fix"]
    assert fix["applicability"] == "unsafe"
    assert any("DistributedSampler(train_set, shuffle=True)" in edit["content"] for edit in fix["edits"])


def test_json_lines_is_one_object_per_line(project, capsys):
    code, out, err = run(capsys, "--output-format", "json-lines", "train.py")
    assert code == 1 and err == ""
    items = [json.loads(line) for line in out.splitlines()]
    assert [item["code"] for item in items] == ["DDP003", "DDP001", "DDP002"]


def test_sarif_validates_against_the_official_schema(project, capsys):
    (project / "broken.py").write_text("import torch.nn as nn\nnn.DataParallel(\n")
    code, out, _ = run(capsys, "--output-format", "sarif", "--unsafe-fixes", ".")
    assert code == 1
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA)
    (run_,) = log["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules][:4] == ["DDP001", "DDP002", "DDP003", "DDP004"]
    results = run_["results"]
    assert {r["ruleId"] for r in results} == {"DDP000", "DDP001", "DDP002", "DDP003"}
    for result in results:
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] in ("train.py", "broken.py")
        if "ruleIndex" in result:
            assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    set_epoch = next(r for r in results if r["ruleId"] == "DDP002")
    replacement = set_epoch["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"]["text"] == "    sampler.set_epoch(epoch)\n"


def test_sarif_rejects_what_the_schema_rejects():
    """The schema really constrains: a result without a message is invalid (so the test above can fail)."""
    log = json.loads(FORMATTERS["sarif"]([Diagnostic("DDP003", "m", "a.py", Location(1, 1), Location(1, 2))]))
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(log, SCHEMA)


def test_sarif_when_clean_has_no_results(project, capsys):
    code, out, _ = run(capsys, "--output-format", "sarif", "clean.py")
    assert code == 0
    log = json.loads(out)
    jsonschema.validate(log, SCHEMA)
    assert log["runs"][0]["results"] == []


def test_github_annotations(project, capsys):
    code, out, _ = run(capsys, "--output-format", "github", "--select", "DDP003", "train.py")
    assert code == 1
    assert out.startswith("::error title=ddplint (DDP003),file=train.py,line=6,col=9,endLine=6,endColumn=31::")
    assert out.rstrip("\n").endswith("DDP003 nn.DataParallel drives every GPU from one process: use DistributedDataParallel")


def test_github_escapes_what_would_break_the_command():
    d = Diagnostic("DDP000", "syntax error: 100% bad\nsecond line", "a,b:c.py", Location(1, 1), Location(1, 1))
    line = format_github([d])
    assert line.count("\n") == 1
    assert "file=a%2Cb%3Ac.py" in line
    assert "100%25 bad%0Asecond line" in line


def test_warning_severity_becomes_a_warning_annotation():
    d = Diagnostic("DDP004", "m", "a.py", Location(1, 1), Location(1, 2), severity="warning")
    assert format_github([d]).startswith("::warning ")


def test_statistics(project, capsys):
    (project / "more.py").write_text("import torch.nn as nn\na = nn.DataParallel(a)\nb = nn.DataParallel(b)\n")
    code, out, _ = run(capsys, "--statistics", ".")
    assert code == 1
    assert out.splitlines() == [
        "3\tDDP003\t[ ] data-parallel",
        "1\tDDP001\t[ ] missing-distributed-sampler",
        "1\tDDP002\t[*] missing-set-epoch",
    ]
    _, out, _ = run(capsys, "--statistics", "--output-format", "json", ".")
    assert json.loads(out)[0] == {"code": "DDP003", "name": "data-parallel", "count": 3, "fixable": False}


def test_statistics_of_nothing_is_empty():
    assert format_statistics([]) == ""


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_terminals_and_no_color_wins(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert use_color(FakeTerminal())
    assert not use_color(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color(FakeTerminal())
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert use_color(io.StringIO())


def test_captured_output_has_no_escape_codes(project, capsys, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    _, out, _ = run(capsys, "--output-format", "full", "train.py")
    assert "\x1b[" not in out


def test_forced_colour_paints_text_output(project, capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, out, _ = run(capsys, "--select", "DDP003", "train.py")
    assert "\x1b[1;31mDDP003\x1b[0m" in out
    _, out, _ = run(capsys, "--select", "DDP003", "--output-format", "json", "train.py")
    assert "\x1b[" not in out
