"""Autofix: applying edits, each rule's fix, and the three promises over every rule example and
example script: the rest of the file stays byte for byte, the result parses and reports none of
the fixed findings, and fixing twice changes nothing."""

from __future__ import annotations

import ast
import difflib
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddplint.cli import main
from ddplint.diagnostics import Edit, Fix, Location
from ddplint.engine import lint_source
from ddplint.fix import apply_fixes, apply_fixes_counted, fix_until_stable, unified_diff
from ddplint.rules import ALL_RULES, select_rules
from ddplint.rules.base import example_source

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def lint(source: str):
    return lint_source(source, "snippet.py", select_rules(["ALL"]))


def fixed(source: str, unsafe: bool = True) -> str:
    return fix_until_stable(textwrap.dedent(source).lstrip("\n"), lint, unsafe).source


def edit(content: str, row: int, column: int, end_row: int, end_column: int) -> Edit:
    return Edit(content, Location(row, column), Location(end_row, end_column))


# -- apply_fixes -------------------------------------------------------------------------------------
def test_apply_fixes_replaces_inserts_and_deletes():
    source = "a = 1\nb = 2\nc = 3\n"
    fixes = [
        Fix("rename", (edit("x", 1, 1, 1, 2),)),
        Fix("insert", (edit("new = 0\n", 3, 1, 3, 1),)),
        Fix("delete", (edit("", 2, 1, 3, 1),)),
    ]
    assert apply_fixes(source, fixes) == "x = 1\nnew = 0\nc = 3\n"


def test_overlapping_fix_is_skipped_whole():
    source = "value = compute()\n"
    first = Fix("a", (edit("result", 1, 1, 1, 6),))
    second = Fix("b", (edit("val", 1, 1, 1, 4), edit("# note\n", 1, 1, 1, 1)))
    text, applied = apply_fixes_counted(source, [first, second])
    assert text == "result = compute()\n"
    assert applied == [first]


def test_identical_edits_of_two_fixes_apply_once():
    source = "import os\nf(a)\ng(b)\n"
    add_import = edit("\nimport sys", 1, 10, 1, 10)
    one = Fix("one", (add_import, edit("A", 2, 3, 2, 4)))
    two = Fix("two", (add_import, edit("B", 3, 3, 3, 4)))
    text, applied = apply_fixes_counted(source, [one, two])
    assert text == "import os\nimport sys\nf(A)\ng(B)\n"
    assert applied == [one, two]


def test_crlf_and_missing_final_newline_are_kept():
    source = "a = 1\r\nb = 2"
    assert apply_fixes(source, [Fix("x", (edit("B", 2, 1, 2, 2),))]) == "a = 1\r\nB = 2"
    assert apply_fixes(source, [Fix("x", (edit("!", 2, 6, 2, 6),))]) == "a = 1\r\nb = 2!"


def test_edit_outside_the_file_is_not_applied():
    assert apply_fixes("a\n", [Fix("x", (edit("b", 7, 1, 7, 1),))]) == "a\n"


def test_unified_diff():
    assert unified_diff("a\n", "a\n", "x.py") == ""
    diff = unified_diff("a\nb\n", "a\nc\n", "x.py")
    assert diff.startswith("--- a/x.py\n+++ b/x.py\n@@")
    assert "-b\n+c\n" in diff


# -- DDP002: set_epoch ------------------------------------------------------------------------------
SET_EPOCH = """
    import torch.distributed as dist
    from torch.utils.data import DataLoader, DistributedSampler

    dist.init_process_group("gloo")
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    for epoch in range(10):
        # one epoch
        for x, y in loader:
            train_step(x, y)
"""


def test_ddp002_inserts_set_epoch_first_in_the_epoch_loop():
    result = fixed(SET_EPOCH, unsafe=False)
    # After the loop's leading comment, right before the statement that was first.
    assert "for epoch in range(10):\n    # one epoch\n    sampler.set_epoch(epoch)\n    for x, y in loader:" in result


def test_ddp002_is_safe():
    (diagnostic,) = lint(textwrap.dedent(SET_EPOCH))
    assert diagnostic.fix is not None and diagnostic.fix.is_safe


def test_ddp002_passes_the_epoch_to_a_set_epoch_given_a_number():
    source = SET_EPOCH.replace("        # one epoch\n", "        sampler.set_epoch(0)\n")
    result = fixed(source, unsafe=False)
    assert "    sampler.set_epoch(epoch)\n    for x, y in loader:" in result
    assert "set_epoch(0)" not in result


def test_ddp002_uses_loader_sampler_for_an_inline_sampler():
    source = """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler

        def main():
            dist.init_process_group("gloo")
            loader = DataLoader(ds, sampler=DistributedSampler(ds))
            for ep in range(3):
                for batch in loader:
                    step(batch)
    """
    assert "    for ep in range(3):\n        loader.sampler.set_epoch(ep)\n" in fixed(source, unsafe=False)


@pytest.mark.parametrize(
    "loop",
    [
        "step = 0\nwhile step < 10:\n    for x in loader:\n        step += 1\n",  # no epoch variable
        "for epoch, _ in enumerate(range(3)):\n    for x in loader:\n        pass\n",  # tuple target
    ],
)
def test_ddp002_offers_no_fix_where_a_name_is_unknown(loop: str):
    source = (
        "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
        "dist.init_process_group('gloo')\nloader = DataLoader(ds, sampler=DistributedSampler(ds))\n" + loop
    )
    diagnostics = lint(source)
    assert [d.code for d in diagnostics] == ["DDP002"]
    assert diagnostics[0].fix is None


def test_ddp002_offers_no_fix_when_the_name_means_two_samplers():
    source = textwrap.dedent(SET_EPOCH) + "sampler = DistributedSampler(other_set)\n"
    assert all(d.fix is None for d in lint(source) if d.code == "DDP002")


# DDP002 names the sampler as the epoch loop's code reaches it, in the message, the why and the fix:
# its variable, else `<loader>.sampler` (a method's `self.train_data.sampler` included); the fix
# covers `for` loops and `while` loops that count their passes, at module level and in methods.
HEAD = (
    "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
    "dist.init_process_group('gloo')\n"
)
METHOD_FOR = HEAD + """
class Trainer:
    def __init__(self, ds):
        self.train_data = DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds))

    def train(self, epochs):
        for epoch in range(epochs):
            for batch in self.train_data:
                self.step(batch)
"""
METHOD_WHILE = HEAD + """
class Trainer:
    def __init__(self, ds):
        self.loader = DataLoader(ds, sampler=DistributedSampler(ds))

    def train(self):
        done = 0
        while done < 10:
            for batch in self.loader:
                self.step(batch)
            done += 1
"""
MODULE_WHILE = HEAD + """
loader = DataLoader(ds, sampler=DistributedSampler(ds))
epoch = 0
while epoch < 10:
    for batch in loader:
        step(batch)
    epoch += 1
"""
NAMED_SAMPLER = HEAD + """
train_sampler = DistributedSampler(ds)
loader = DataLoader(ds, sampler=train_sampler)
for ep in range(3):
    for batch in loader:
        step(batch)
"""
REACHES = [
    (METHOD_FOR, "self.train_data.sampler", "epoch", "        for epoch in range(epochs):\n            self.train_data.sampler.set_epoch(epoch)\n"),
    (METHOD_WHILE, "self.loader.sampler", "done", "        while done < 10:\n            self.loader.sampler.set_epoch(done)\n"),
    (MODULE_WHILE, "loader.sampler", "epoch", "while epoch < 10:\n    loader.sampler.set_epoch(epoch)\n"),
    (NAMED_SAMPLER, "train_sampler", "ep", "for ep in range(3):\n    train_sampler.set_epoch(ep)\n"),
]


@pytest.mark.parametrize("source, reach, epoch, inserted", REACHES, ids=["method-for", "method-while", "while", "variable"])
def test_ddp002_names_the_sampler_as_the_code_reaches_it(source: str, reach: str, epoch: str, inserted: str):
    (diagnostic,) = lint(source)
    assert diagnostic.message == f"`{reach}` never gets set_epoch({epoch}): every epoch replays the same order"
    assert diagnostic.explanation is not None
    assert diagnostic.explanation.endswith(f"call {reach}.set_epoch({epoch}) at the start of each epoch")
    assert diagnostic.fix is not None and diagnostic.fix.is_safe
    assert diagnostic.fix.message == f"Call `{reach}.set_epoch({epoch})` at the start of each epoch"
    result = fixed(source, unsafe=False)
    assert inserted in result
    ast.parse(result)
    assert not [d for d in lint(result) if d.code == "DDP002"]
    assert fixed(result, unsafe=False) == result


def test_ddp002_leaves_a_step_loop_that_restarts_its_iterator_unfixed():
    """`step += 1` counts steps there, not passes over the loader: no set_epoch(step) each step."""
    source = HEAD + """
loader = DataLoader(ds, sampler=DistributedSampler(ds))
it = iter(loader)
step = 0
while step < 1000:
    try:
        batch = next(it)
    except StopIteration:
        it = iter(loader)
        batch = next(it)
    train_step(batch)
    step += 1
"""
    (diagnostic,) = lint(source)
    assert diagnostic.message == "new iterators over `loader` replay the same order: no set_epoch()"
    assert diagnostic.fix is None


def test_ddp002_leaves_a_while_loop_without_a_pass_counter_unfixed():
    """A counter moved in an inner loop or under an `if` does not number the passes."""
    for body in ("    if ready():\n        epoch += 1\n", "    epoch += 0\n"):
        source = MODULE_WHILE.replace("    epoch += 1\n", body)
        (diagnostic,) = lint(source)
        assert diagnostic.fix is None and diagnostic.message.startswith("`loader.sampler` never gets set_epoch(epoch)")


# -- DDP001: DistributedSampler ---------------------------------------------------------------------
NO_SAMPLER = """
    import torch.distributed as dist
    from torch.utils.data import DataLoader

    dist.init_process_group("gloo")
    train_loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=2)
    other_loader = DataLoader(dataset, batch_size=64, shuffle=True)
"""


def test_ddp001_moves_shuffle_into_a_sampler_and_imports_it_once():
    result = fixed(NO_SAMPLER)
    assert result.count("from torch.utils.data import DistributedSampler\n") == 1
    assert (
        "train_loader = DataLoader(dataset, batch_size=32, "
        "sampler=DistributedSampler(dataset, shuffle=True), num_workers=2)" in result
    )
    assert "other_loader = DataLoader(dataset, batch_size=64, sampler=DistributedSampler(dataset, shuffle=True))" in result


def test_ddp001_is_unsafe_and_not_applied_by_plain_fix():
    assert fixed(NO_SAMPLER, unsafe=False) == textwrap.dedent(NO_SAMPLER).lstrip("\n")
    assert all(d.fix is not None and not d.fix.is_safe for d in lint(textwrap.dedent(NO_SAMPLER)))


def test_ddp001_keeps_the_sequential_order_when_shuffle_was_not_given():
    source = """
        import torch.distributed as dist
        from torch.utils.data import DataLoader, DistributedSampler as DS

        dist.init_process_group("gloo")
        train_loader = DataLoader(dataset, batch_size=32)
    """
    result = fixed(source)
    assert "train_loader = DataLoader(dataset, batch_size=32, sampler=DS(dataset, shuffle=False))" in result
    assert result.count("import") == 2  # the existing alias was used, nothing imported


def test_ddp001_replaces_a_random_sampler():
    source = example_source(ALL_RULES[0].invalid[2])
    result = fixed(source)
    assert "sampler=DistributedSampler(train_set))" in result and "RandomSampler(train_set)" not in result


@pytest.mark.parametrize(
    "call",
    [
        "DataLoader(dataset, **loader_kwargs)",  # the sampler may be in the kwargs
        "DataLoader(build_dataset(), shuffle=True)",  # a dataset expression must not run twice
        "DataLoader(dataset, 32, True)",  # shuffle by position
    ],
)
def test_ddp001_offers_no_fix_it_cannot_make_right(call: str):
    source = (
        "import torch.distributed as dist\nfrom torch.utils.data import DataLoader\n"
        f"dist.init_process_group('gloo')\nloader_kwargs = {{'batch_size': 64}}\ntrain_loader = {call}\n"
    )
    diagnostics = lint(source)
    assert [d.code for d in diagnostics] == ["DDP001"]
    assert diagnostics[0].fix is None


def test_ddp001_import_goes_after_a_docstring_when_there_are_no_top_level_imports():
    source = '"""Doc."""\ndef main():\n    import torch.distributed as dist\n    from torch.utils.data import DataLoader\n    dist.init_process_group("gloo")\n    train_loader = DataLoader(ds, shuffle=True)\n'
    result = fixed(source)
    assert result.startswith('"""Doc."""\nfrom torch.utils.data import DistributedSampler\ndef main():')


# -- DDP006: shuffle next to a sampler -------------------------------------------------------------
def _with_sampler(call: str) -> str:
    return (
        "import torch.distributed as dist\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
        f"dist.init_process_group('gloo')\nsampler = DistributedSampler(ds)\nloader = {call}\n"
    )


@pytest.mark.parametrize(
    "call, expected",
    [
        ("DataLoader(ds, batch_size=8, shuffle=True, sampler=sampler)", "DataLoader(ds, batch_size=8, sampler=sampler)"),
        ("DataLoader(ds, sampler=sampler, shuffle=True)", "DataLoader(ds, sampler=sampler)"),
        ("DataLoader(ds, sampler=sampler, shuffle=True,)", "DataLoader(ds, sampler=sampler,)"),
        (
            "DataLoader(\n    ds,\n    shuffle=True,  # why not\n    sampler=sampler,\n)",
            "DataLoader(\n    ds,\n    sampler=sampler,\n)",
        ),
    ],
)
def test_ddp006_drops_shuffle_safely(call: str, expected: str):
    source = _with_sampler(call)
    (diagnostic,) = [d for d in lint(source) if d.code == "DDP006"]
    assert diagnostic.fix is not None and diagnostic.fix.is_safe
    assert fixed(source, unsafe=False) == _with_sampler(expected)


def test_ddp006_offers_no_fix_for_a_batch_sampler_clash_or_positional_shuffle():
    source = _with_sampler("DataLoader(ds, 8, True, sampler)")
    assert [(d.code, d.fix) for d in lint(source) if d.code == "DDP006"] == [("DDP006", None)]


# -- DDP008: map_location ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, expected",
    [
        ("torch.load(path)", 'torch.load(path, map_location="cpu")'),
        ("torch.load(path, map_location=None)", 'torch.load(path, map_location="cpu")'),
        ("torch.load(path, None)", 'torch.load(path, "cpu")'),
        ("torch.load(\n    path,\n    weights_only=True,\n)", 'torch.load(\n    path,\n    weights_only=True, map_location="cpu",\n)'),
    ],
)
def test_ddp008_adds_map_location_unsafely(call: str, expected: str):
    template = "import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl')\nstate = {}\n"
    source = template.format(call)
    diagnostics = [d for d in lint(source) if d.code == "DDP008"]
    assert len(diagnostics) == 1 and not diagnostics[0].fix.is_safe
    assert fixed(source, unsafe=False) == source
    assert fixed(source) == template.format(expected)


# -- the three promises over every example ---------------------------------------------------------------
def _fixable_sources() -> list[tuple[str, str]]:
    cases = [
        (f"{rule.code}-invalid-{i}", example_source(example))
        for rule in ALL_RULES
        for i, example in enumerate(rule.invalid)
    ]
    cases += [(path.name, path.read_text()) for path in sorted(EXAMPLES.glob("*_buggy.py"))]
    return cases


CASES = _fixable_sources()


def _touched_rows(before: str, after: str) -> set[int]:
    """Rows of `before` that the fix loop changed (diffing line by line)."""
    rows: set[int] = set()
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            rows.update(range(i1 + 1, i2 + 1))
    return rows


@pytest.mark.parametrize("name, source", CASES, ids=[name for name, _ in CASES])
def test_fixes_keep_the_rest_parse_clear_their_findings_and_are_idempotent(name: str, source: str):
    before = lint(source)
    outcome = fix_until_stable(source, lint, unsafe=True)
    after = outcome.source
    # 1. Byte for byte elsewhere: the only original lines that changed are lines a finding's fix
    #    edits (whole lines inserted at column 1 change none).
    edited_rows = {
        row
        for d in before
        if d.fix is not None
        for e in d.fix.edits
        if e.location != e.end_location or e.location.column != 1
        for row in range(e.location.row, e.end_location.row + 1)
    }
    assert _touched_rows(source, after) <= edited_rows
    # 2. It parses.
    ast.parse(after)
    # 3. Re-checking reports none of the fixed findings: what remains of a fixed rule's code is
    #    exactly what had no fix to begin with.
    fixed_codes = {d.code for d in before if d.fix is not None}
    for code in fixed_codes:
        unfixable = [d for d in before if d.code == code and d.fix is None]
        assert len([d for d in outcome.remaining if d.code == code]) == len(unfixable), (code, after)
    assert not any(d.fix for d in outcome.remaining)
    # 4. Fixing twice changes nothing.
    assert fix_until_stable(after, lint, unsafe=True).source == after


def test_the_examples_do_exercise_both_fixes():
    """The property test above must not pass vacuously."""
    fixed_codes = set()
    for _, source in CASES:
        fixed_codes |= {d.code for d in lint(source) if d.fix is not None}
    assert {"DDP001", "DDP002", "DDP006", "DDP008"} <= fixed_codes


def test_fixed_buggy_examples_match_their_fixed_twins_findings():
    """The fixed DDP002 example reports what its hand-fixed twin reports: nothing."""
    source = (EXAMPLES / "ddp002_missing_set_epoch_buggy.py").read_text()
    assert lint(fixed(source, unsafe=False)) == []


# -- the command line -----------------------------------------------------------------------------------
@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "train.py").write_text(textwrap.dedent(SET_EPOCH).lstrip("\n"))
    (tmp_path / "loader.py").write_text(textwrap.dedent(NO_SAMPLER).lstrip("\n"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_fix_writes_safe_fixes_and_reports_the_rest(project: Path, capsys):
    before_loader = (project / "loader.py").read_text()
    assert main(["--fix", "."]) == 1  # the unsafe DDP001 findings remain
    out, err = capsys.readouterr()
    assert "sampler.set_epoch(epoch)" in (project / "train.py").read_text()
    assert (project / "loader.py").read_text() == before_loader
    assert [line.split()[1] for line in out.splitlines()] == ["DDP001", "DDP001"]
    assert "(1 fixed, 2 remaining)" in err
    assert "(2 hidden fixes can be enabled with the `--unsafe-fixes` option.)" in err


def test_fix_with_unsafe_fixes_clears_everything(project: Path, capsys):
    assert main(["--fix", "--unsafe-fixes", "."]) == 0
    assert "(3 fixed, 0 remaining)" in capsys.readouterr().err
    assert main(["."]) == 0


def test_diff_prints_and_writes_nothing(project: Path, capsys):
    before = (project / "train.py").read_text()
    assert main(["--diff", "."]) == 1
    out, err = capsys.readouterr()
    assert (project / "train.py").read_text() == before
    assert out.startswith("--- a/train.py\n+++ b/train.py\n")
    assert "+    sampler.set_epoch(epoch)\n" in out
    assert "loader.py" not in out and "Would fix 1 finding (2 fixes available with `--unsafe-fixes`)." in err
    assert main(["--diff", "loader.py"]) == 0  # nothing safe to do there


def test_fix_keeps_crlf_line_endings(project: Path, capsys):
    crlf = textwrap.dedent(SET_EPOCH).lstrip("\n").replace("\n", "\r\n").encode()
    (project / "train.py").write_bytes(crlf)
    assert main(["--fix", "train.py"]) == 0
    data = (project / "train.py").read_bytes()
    assert b"    sampler.set_epoch(epoch)\r\n" in data
    assert data.count(b"\r\n") == crlf.count(b"\r\n") + 1 and data.count(b"\n") == data.count(b"\r\n")


def test_fix_via_the_console_script(project: Path):
    result = subprocess.run([sys.executable, "-m", "ddplint", "--fix", "train.py"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "sampler.set_epoch(epoch)" in (project / "train.py").read_text()


@pytest.mark.parametrize("prefix, encoding", [(b"\xef\xbb\xbf", "utf-8"), (b"# -*- coding: latin-1 -*-\n", "latin-1")])
def test_fix_keeps_the_file_encoding(project: Path, prefix: bytes, encoding: str):
    source = textwrap.dedent(SET_EPOCH).lstrip("\n").replace("# one epoch", "# époque")
    (project / "train.py").write_bytes(prefix + source.encode(encoding))
    assert main(["--fix", "train.py"]) == 0
    data = (project / "train.py").read_bytes()
    assert data.startswith(prefix)
    assert data[len(prefix):].decode(encoding) == source.replace(
        "    # époque\n", "    # époque\n    sampler.set_epoch(epoch)\n"
    )


def test_fix_leaves_unparsable_and_unreadable_files_alone(project: Path, capsys):
    broken = "import torch.distributed as dist\nfrom torch.utils.data import DistributedSampler\nfor x in (:\n"
    (project / "broken.py").write_text(broken)
    assert main(["--fix", "broken.py", "train.py", "missing.py"]) == 1
    out = capsys.readouterr().out
    assert (project / "broken.py").read_text() == broken
    assert "broken.py:3:" in out and "DDP000" in out and "missing.py:1:1: DDP000 no such file" in out
    assert "sampler.set_epoch(epoch)" in (project / "train.py").read_text()


# -- apply_fixes against a reference, on generated input ---------------------------------------------------

_LINES = st.lists(st.text(alphabet="ab( )=:#\t", max_size=12), min_size=1, max_size=6)


@st.composite
def _source_and_fixes(draw):
    lines = draw(_LINES)
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    source = newline.join(lines) + draw(st.sampled_from(["", newline]))
    points = sorted(draw(st.lists(st.integers(0, len(source)), min_size=0, max_size=8)))
    fixes = []
    for start, end in zip(points[::2], points[1::2]):
        content = draw(st.text(alphabet="xyz\n", max_size=4))
        fixes.append((start, end, content))
    return source, fixes


def _location(source: str, offset: int) -> Location:
    starts = [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", source))]
    row = max(i for i, start in enumerate(starts) if start <= offset)
    return Location(row + 1, offset - starts[row] + 1)


@settings(max_examples=150, deadline=None)
@given(_source_and_fixes())
def test_apply_fixes_matches_slicing_for_disjoint_edits(case):
    source, spans = case
    # Disjoint spans (zip of sorted points), one per fix, in random-ish order: the result must be
    # what splicing the strings right to left gives.
    fixes = [Fix("f", (Edit(c, _location(source, s), _location(source, e)),)) for s, e, c in reversed(spans)]
    expected = source
    for start, end, content in sorted(spans, reverse=True):
        expected = expected[:start] + content + expected[end:]
    merged_points = [p for s, e, _ in spans for p in (s, e)]
    if len(set(merged_points)) < len(merged_points):
        return  # touching spans may legitimately be refused; covered by the unit tests above
    assert apply_fixes(source, fixes) == expected
