"""Discovery, the trigger screen, noqa, and bad input that must never become a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ddplint.api import lint_file, lint_paths
from ddplint.discovery import discover
from ddplint.engine import lint_source
from ddplint.rules import select_rules

BUGGY = """\
import torch.nn as nn
model = nn.DataParallel(model)
"""


def codes(diagnostics):
    return [(d.location.row, d.code) for d in diagnostics]


def test_finding_location_and_range():
    (diagnostic,) = lint_source(BUGGY, "train.py")
    assert diagnostic.code == "DDP003"
    assert (diagnostic.location.row, diagnostic.location.column) == (2, 9)
    assert (diagnostic.end_location.row, diagnostic.end_location.column) == (2, 31)
    assert diagnostic.filename == "train.py"


def test_loop_findings_span_only_the_loop_header():
    source = """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
dist.init_process_group("gloo")
loader = DataLoader(ds, sampler=DistributedSampler(ds))
for epoch in range(3):
    for batch in loader:
        step(batch)
"""
    (diagnostic,) = lint_source(source, "t.py")
    assert diagnostic.code == "DDP002"
    assert (diagnostic.location.row, diagnostic.end_location.row) == (5, 5)


@pytest.mark.parametrize(
    "comment,suppressed",
    [
        ("  # noqa", True),
        ("  # noqa: DDP003", True),
        ("  # noqa:DDP001,DDP003", True),
        ("  # NOQA: ddp003", True),
        ("  # noqa: DDP001", False),
        ("  # no qa", False),
    ],
)
def test_noqa(comment, suppressed):
    source = BUGGY.replace("(model)\n", f"(model){comment}\n")
    assert (lint_source(source, "t.py") == []) is suppressed


def test_file_level_noqa():
    assert lint_source("# ddplint: noqa\n" + BUGGY, "t.py") == []


def test_files_without_trigger_tokens_are_not_parsed(monkeypatch):
    import libcst

    def boom(*args, **kwargs):
        raise AssertionError("parsed a file that cannot matter")

    monkeypatch.setattr(libcst, "parse_module", boom)
    assert lint_source("import numpy as np\nprint(np.zeros(3))\n", "t.py") == []


def test_select_and_ignore_limit_rules():
    assert codes(lint_source(BUGGY, "t.py", select_rules(["DDP001"]))) == []
    assert codes(lint_source(BUGGY, "t.py", select_rules(None, ["DDP003"]))) == []
    assert codes(lint_source(BUGGY, "t.py", select_rules(["DDP00"]))) == [(2, "DDP003")]


# -- bad input: one DDP000 line, never a traceback ------------------------------------------------------
@pytest.mark.parametrize(
    "content,reason",
    [
        (b"import torch.nn as nn\ndef broken(:\n    nn.DataParallel(m)\n", "syntax error"),
        (b"import torch.nn as nn\nprint 'DataParallel'\n", "syntax error"),  # Python 2
        (b"import torch.nn as nn\nnn.DataParallel(\xff\xfe)\n", "cannot decode"),
        (b"# -*- coding: klingon -*-\nDataParallel\n", "cannot decode"),
        (b"DataParallel\x00(m)\n", ""),
        (b"DataParallel = 1\n" + b"(" * 5000 + b"1" + b")" * 5000 + b"\n", ""),
        # Deep operator / attribute chains overflow libcst's native parser (a segfault, not an
        # exception): the CPython screen must catch them first.
        (b"DataParallel = 1\nx = " + b"+".join([b"1"] * 20000) + b"\n", "nested too deeply"),
        (b"DataParallel = 1\nx = a" + b".b" * 30000 + b"\n", "nested too deeply"),
    ],
    ids=["syntax", "python2", "bad-utf8", "unknown-codec", "null-byte", "deep-parens", "long-chain", "long-attr"],
)
def test_unparsable_input_is_one_ddp000_line(content, reason):
    diagnostics = lint_source(content, "bad.py")
    assert [d.code for d in diagnostics] == ["DDP000"]
    assert reason in diagnostics[0].message
    assert "\n" not in diagnostics[0].message


def test_latin1_file_with_coding_declaration_is_checked():
    source = "# -*- coding: latin-1 -*-\n# caf\xe9\nimport torch.nn as nn\nm = nn.DataParallel(m)\n"
    assert codes(lint_source(source.encode("latin-1"), "t.py")) == [(4, "DDP003")]


def test_bom_and_empty_files():
    assert codes(lint_source(b"\xef\xbb\xbf" + BUGGY.encode(), "t.py")) == [(2, "DDP003")]
    assert lint_source(b"", "t.py") == []


def test_one_bad_file_does_not_stop_the_others(tmp_path: Path):
    (tmp_path / "a_bad.py").write_bytes(b"DataParallel(\n")
    (tmp_path / "b_good.py").write_text(BUGGY)
    (tmp_path / "c_gone.py").symlink_to(tmp_path / "missing.py")
    results = list(lint_paths([str(tmp_path)]))
    assert [(Path(d.filename).name, d.code) for d in results] == [
        ("a_bad.py", "DDP000"),
        ("b_good.py", "DDP003"),
        ("c_gone.py", "DDP000"),
    ]


def test_unreadable_file(tmp_path: Path, monkeypatch):
    path = tmp_path / "secret.py"
    path.write_text(BUGGY)
    path.chmod(0)
    if os.geteuid() == 0:  # root reads any file: refuse it the way the kernel would for others
        real = os.open

        def refuse(name, flags, *args, **kwargs):
            if os.fspath(name) == str(path):
                raise PermissionError(13, "Permission denied", str(name))
            return real(name, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", refuse)
    (diagnostic,) = lint_file(str(path), select_rules())
    assert diagnostic.code == "DDP000" and diagnostic.message == "cannot read: Permission denied"


def test_missing_path_is_reported():
    (diagnostic,) = list(lint_paths(["does/not/exist.py"]))
    assert diagnostic.code == "DDP000" and "no such file" in diagnostic.message


def test_internal_rule_error_is_reported_and_the_run_continues():
    from dataclasses import replace

    def crash(facts):
        raise RuntimeError("boom")

    rules = select_rules()
    broken = [replace(rules[0], check=crash), *rules[1:]]
    errors = []
    diagnostics = lint_source(BUGGY + "import torch.distributed\nDataLoader\n", "t.py", broken, errors)
    assert codes(diagnostics) == [(2, "DDP003")]
    assert len(errors) == 1 and "DDP001" in errors[0].detail and "boom" in errors[0].detail


def test_discovery_skips_environments_and_build_outputs(tmp_path: Path):
    for rel in ["pkg/train.py", "pkg/notes.txt", ".venv/lib/x.py", "build/lib/y.py", "dist/z.py",
                "node_modules/q.py", ".git/hooks/h.py", "__pycache__/c.py", "env/lib/w.py"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    found = [Path(p).relative_to(tmp_path).as_posix() for p, _ in discover([str(tmp_path)])]
    assert found == ["pkg/train.py"]


def test_explicit_files_are_checked_whatever_their_name(tmp_path: Path):
    script = tmp_path / "train_script"
    script.write_text(BUGGY)
    assert codes(lint_paths([str(script)])) == [(2, "DDP003")]


def test_static_side_never_executes_the_code(tmp_path: Path):
    marker = tmp_path / "executed"
    script = tmp_path / "evil.py"
    script.write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
        "import torch.nn as nn\nmodel = nn.DataParallel(model)\n"
    )
    assert codes(lint_paths([str(script)])) == [(4, "DDP003")]
    assert not marker.exists()


def test_huge_generated_file_is_one_line_and_others_still_checked(tmp_path: Path):
    table = b"import torch.distributed as dist\nTABLE = [\n" + b"    (1, 2, 3, 'DataLoader'),\n" * 1_800_000 + b"]\n"
    assert len(table) > 50 * 10**6
    (tmp_path / "a_generated.py").write_bytes(table)
    (tmp_path / "b_plain_big.py").write_bytes(b"x = [\n" + b"    1,\n" * 8_000_000 + b"]\n")  # no trigger at all
    (tmp_path / "c_train.py").write_text(BUGGY)
    results = [(Path(d.filename).name, d.code, d.message) for d in lint_paths([str(tmp_path)], jobs=2)]
    assert [(name, code) for name, code, _ in results] == [("a_generated.py", "DDP000"), ("c_train.py", "DDP003")]
    assert "not analysed" in results[0][2] and "MB" in results[0][2]


def test_triggers_in_comments_and_strings_do_not_cost_a_parse(monkeypatch):
    from ddplint import engine
    from ddplint.analysis.syntax import forget_parsed

    forget_parsed()  # a tree an earlier test kept for this content would spare the parse counted here
    parsed = []
    real = engine.cst.parse_module
    monkeypatch.setattr(engine.cst, "parse_module", lambda data: parsed.append(1) or real(data))
    docs_only = '"""Wraps nn.DataParallel and DataLoader; see DistributedSampler."""\n# dist.barrier()\nx = "DataParallel"\n'
    assert lint_source(docs_only, "notes.py") == []
    assert parsed == []
    assert codes(lint_source(BUGGY, "t.py")) == [(2, "DDP003")]
    assert parsed == [1]


def test_triggers_are_whole_names():
    from ddplint.screen import candidates_by_bytes

    ddp004 = [rule for rule in select_rules() if rule.code == "DDP004"]
    assert candidates_by_bytes(b"import torch.distributed\nx = torch.broadcast_tensors(a, b)\n", ddp004) == []
    assert candidates_by_bytes(b"import torch.distributed as dist\ndist.broadcast(t, 0)\n", ddp004) == ddp004


def test_static_side_never_imports_the_checked_package(tmp_path: Path):
    marker = tmp_path / "imported"
    package = tmp_path / "proj" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n")
    (package / "train.py").write_text("from pkg import helper\n" + BUGGY)
    (tmp_path / "proj" / "conftest.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    assert [d.code for d in lint_paths([str(tmp_path / "proj")], jobs=2)] == ["DDP003"]
    assert not marker.exists()


def test_python_warnings_about_the_checked_file_are_not_printed(tmp_path: Path, capfd):
    script = tmp_path / "t.py"
    script.write_text('import torch.nn as nn\npattern = "\\d+"\nm = nn.DataParallel(m)\n')
    assert codes(lint_paths([str(script)])) == [(3, "DDP003")]
    assert "Warning" not in capfd.readouterr().err


def test_noqa_after_a_form_feed_still_applies():
    source = "import torch.nn as nn\n\x0c\nm = nn.DataParallel(m)  # noqa: DDP003\n"
    assert lint_source(source, "t.py") == []
