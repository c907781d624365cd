"""A file that does not parse is analysed except for the statements that do not (recovery.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ddplint.engine import lint_source
from ddplint.recovery import recover
from ddplint.screen import compile_screen

EXAMPLES = sorted(Path(__file__).parent.parent.joinpath("examples").glob("*_buggy.py"))

# What a line looks like while it is being typed.
HALF_TYPED = ("print(f'epoch {e", "loss = criterion(out, ", "if epoch", "for batch in", "model.", "x = [1, 2", "print 'x'")


def codes(diagnostics):
    return [(d.location.row, d.code) for d in diagnostics]


def test_findings_elsewhere_stay_and_the_broken_statement_gets_cpythons_position():
    source = (
        "import torch.nn as nn\n"
        "model = nn.DataParallel(model)\n"
        "def report(x):\n"
        "    print 'loss', x\n"  # Python 2
        "other = nn.DataParallel(other)\n"
    )
    found = lint_source(source, "t.py")
    assert codes(found) == [(2, "DDP003"), (4, "DDP000"), (5, "DDP003")]
    broken = found[1]
    try:
        compile(source, "t.py", "exec")
    except SyntaxError as exc:
        assert (broken.location.row, broken.location.column) == (exc.lineno, exc.offset)
        assert broken.message == f"syntax error: {exc.msg}"


def test_a_broken_statement_in_a_loop_costs_only_itself_not_the_loop():
    source = (
        "import torch.nn as nn\n"
        "for x in data:\n"
        "    y = nn.DataParallel(x)\n"
        "    z = foo(\n"  # never closed: by indentation, the statement ends where the loop does
        "m = nn.DataParallel(m)\n"
    )
    assert codes(lint_source(source, "t.py")) == [(3, "DDP003"), (4, "DDP000"), (5, "DDP003")]


def test_a_broken_compound_statement_costs_only_itself():
    source = "import torch.nn as nn\ndef f(:\n    a = nn.DataParallel(a)\nm = nn.DataParallel(m)\n"
    assert codes(lint_source(source, "t.py")) == [(2, "DDP000"), (4, "DDP003")]


def test_a_file_that_compiles_is_left_alone():
    source = EXAMPLES[0].read_bytes()
    recovered = recover(source, "t.py")
    assert recovered is not None and recovered.data == source and recovered.broken == ()


def test_only_syntax_errors_are_recovered():
    assert recover(b"# -*- coding: klingon -*-\nx = (\n", "t.py") is None
    (diagnostic,) = lint_source(b"# -*- coding: klingon -*-\nDataParallel(\n", "t.py")
    assert "cannot decode" in diagnostic.message


def test_recovered_text_still_passes_the_nesting_guard():
    # libcst's native parser overflows the C stack on this chain; the recovered text must be refused
    # before it gets there (a crash here would kill the test process).
    source = b"import torch.nn as nn\nm = nn.DataParallel(m)\nx = (\n\ny = a" + b".b" * 30000 + b"\n"
    found = lint_source(source, "t.py")
    assert found and all(d.code == "DDP000" for d in found)


def test_recovery_gives_up_on_a_file_broken_everywhere():
    source = "import torch.nn as nn\n" + "print 'x'\n" * 100 + "m = nn.DataParallel(m)\n"
    (diagnostic,) = lint_source(source, "t.py")
    assert diagnostic.code == "DDP000" and diagnostic.location.row == 2


def test_cli_reports_python2_leftovers_and_the_findings(tmp_path: Path):
    script = tmp_path / "old.py"
    script.write_text("import torch.nn as nn\nprint 'starting'\nmodel = nn.DataParallel(model)\n")
    result = subprocess.run(
        [sys.executable, "-m", "ddplint", "--no-cache", str(script)],
        capture_output=True, text=True, cwd=Path(__file__).parent.parent,
    )
    assert ":2:1: DDP000 syntax error" in result.stdout
    assert ":3:9: DDP003" in result.stdout
    assert "Traceback" not in result.stderr


@st.composite
def half_typed_edits(draw):
    """(example text, the same text with a half-typed line on one of its empty lines, the same with
    `pass` there instead): the broken line must cost exactly what a `pass` there would."""
    path = draw(st.sampled_from(EXAMPLES))
    lines = path.read_text().split("\n")
    empty = [i for i, line in enumerate(lines) if not line.strip() and any(rest.strip() for rest in lines[i + 1 :])]
    assume(empty)
    row = draw(st.sampled_from(empty))
    following = next(rest for rest in lines[row + 1 :] if rest.strip())
    indent = following[: len(following) - len(following.lstrip())]
    fragment = draw(st.sampled_from(HALF_TYPED))
    edited = lines[:row] + [indent + fragment] + lines[row + 1 :]
    neutral = lines[:row] + [indent + "pass"] + lines[row + 1 :]
    return row + 1, "\n".join(edited), "\n".join(neutral)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(half_typed_edits())
def test_a_half_typed_line_costs_only_its_own_statement(edit):
    row, edited, neutral = edit
    assume(_compiles(neutral) and not _compiles(edited))  # else the line was in a string or a bracket
    _check_half_typed(row, edited, neutral)


def _compiles(source: str) -> bool:
    try:
        compile(source, "t.py", "exec")
    except SyntaxError:
        return False
    return True


def _check_half_typed(row, edited, neutral):
    found = lint_source(edited, "t.py")
    errors = [d for d in found if d.code == "DDP000"]
    assert [d.location.row for d in errors] == [row]
    assert [d for d in found if d.code != "DDP000"] == lint_source(neutral, "t.py")


@st.composite
def broken_texts(draw):
    lines = draw(st.sampled_from(EXAMPLES)).read_text().split("\n")
    for _ in range(draw(st.integers(1, 4))):
        row = draw(st.integers(0, len(lines)))
        indent = draw(st.sampled_from(("", "    ", "        ", "  ")))
        junk = draw(st.sampled_from(HALF_TYPED + ("else:", "def f(:", ")", "'''", "@dec", "return", "  x = (")))
        lines = lines[:row] + [indent + junk] + lines[row:]
    return "\n".join(lines)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(broken_texts())
def test_recovered_text_compiles_and_keeps_every_other_line(source):
    recovered = recover(source.encode(), "t.py")
    if recovered is None:
        return  # too broken: the engine reports the first syntax error alone
    compile(recovered.data, "t.py", "exec", dont_inherit=True)
    before, after = source.encode().split(b"\n"), recovered.data.split(b"\n")
    assert len(before) == len(after)
    for old, new in zip(before, after):
        assert new == old or new == b"" or new.strip() == b"pass"
    assert bool(recovered.broken) == (not _compiles(source))  # junk inside a string breaks nothing


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(broken_texts())
def test_recovery_from_the_screens_error_is_recovery_from_a_compile_of_its_own(source):
    """The engine hands recovery the error its screen's compile met, saving a compile per
    half-typed state: the repair is the same."""
    problem, _ = compile_screen(source.encode(), "t.py")
    assume(problem is not None and problem.is_syntax_error)
    assert recover(source.encode(), "t.py", problem.as_syntax_error()) == recover(source.encode(), "t.py")
