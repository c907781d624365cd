"""The LSP server's pure parts: positions, incremental edits, `# noqa` editing, fix-all edits."""

from __future__ import annotations

import pytest
from lsprotocol import types

from ddplint.diagnostics import Diagnostic, Edit, Fix, Location
from ddplint.lsp import noqa
from ddplint.lsp.actions import ActionBuilder
from ddplint.lsp.convert import lsp_severity
from ddplint.lsp.documents import (
    UTF8,
    UTF16,
    UTF32,
    TextDocument,
    from_client_column,
    split_lines,
    to_client_column,
)
from ddplint.lsp.server import Options
from ddplint.recovery import SYNTAX_ERROR_PREFIX

ROCKET = "\U0001F680"  # outside the BMP: 1 code point, 2 UTF-16 units, 4 UTF-8 bytes


def pos(line, character):
    return types.Position(line=line, character=character)


# -- positions -------------------------------------------------------------------------------
def test_lines_split_only_where_lsp_splits():
    assert split_lines("a\nb\r\nc\rd\x0ce\u2028f\n") == ["a", "b", "c", "d\x0ce\u2028f", ""]


@pytest.mark.parametrize("encoding, expected", [(UTF32, 4), (UTF16, 5), (UTF8, 7)])
def test_column_after_a_non_bmp_character(encoding, expected):
    line = f'x="{ROCKET}"'
    closing_quote = 4  # code points
    assert to_client_column(line, closing_quote, encoding) == expected
    assert from_client_column(line, expected, encoding) == closing_quote


def test_a_column_inside_a_surrogate_pair_rounds_to_the_next_character():
    assert from_client_column(f"{ROCKET}x", 1, UTF16) == 1


def test_columns_past_the_end_clamp_to_the_line():
    assert to_client_column("abc", 10, UTF16) == 3
    assert from_client_column("abc", 10, UTF16) == 3


def test_incremental_change_across_lines_and_after_non_bmp_text():
    document = TextDocument("file:///x.py", f"a{ROCKET}b\nsecond\nthird\n", 1)
    # Replace from just after the rocket (UTF-16 column 3) to the 'c' of "second".
    change = types.TextDocumentContentChangePartial(range=types.Range(start=pos(0, 3), end=pos(1, 4)), text="-")
    document.apply_change(change, UTF16)
    assert document.text == f"a{ROCKET}-nd\nthird\n"
    assert document.lines == [f"a{ROCKET}-nd", "third", ""]


def test_incremental_change_in_a_crlf_document_with_a_form_feed():
    document = TextDocument("file:///x.py", "one\r\n\x0ctwo\r\nthree\r\n", 1)
    change = types.TextDocumentContentChangePartial(range=types.Range(start=pos(2, 0), end=pos(2, 5)), text="3")
    document.apply_change(change, UTF16)
    assert document.text == "one\r\n\x0ctwo\r\n3\r\n"


def test_whole_document_change_replaces_the_text():
    document = TextDocument("file:///x.py", "old\n", 1)
    document.apply_change(types.TextDocumentContentChangeWholeDocument(text="new\ntext"), UTF16)
    assert document.lines == ["new", "text"]


# -- noqa ------------------------------------------------------------------------------------
def apply(line, edit):
    return line[: edit.start] + edit.text + line[edit.end :]


@pytest.mark.parametrize(
    "line, expected",
    [
        ("x = f()", "x = f()  # noqa: DDP002"),
        ("x = f()   ", "x = f()  # noqa: DDP002"),
        ("x = f()  # why", "x = f()  # why  # noqa: DDP002"),
        ("x = f()  # noqa: DDP001", "x = f()  # noqa: DDP001, DDP002"),
        ("x = f()  #noqa:ddp001,DDP003  # more", "x = f()  #noqa: DDP001, DDP003, DDP002  # more"),
        ("x = f()  # noqa: DDP001 because", "x = f()  # noqa: DDP001, DDP002 because"),
    ],
)
def test_add_code(line, expected):
    assert apply(line, noqa.add_code(line, "DDP002")) == expected


@pytest.mark.parametrize("line", ["x = f()  # noqa", "x = f()  # noqa: DDP002", "x = f()  # NOQA: ddp001, ddp002"])
def test_add_code_when_already_suppressed(line):
    assert noqa.add_code(line, "DDP002") is None


def test_a_noqa_inside_a_string_is_not_merged_into():
    line = 'x = f("# noqa: DDP001")  # note'
    edit = noqa.add_code(line, "DDP002", comment_start=line.index("# note"))
    assert apply(line, edit) == 'x = f("# noqa: DDP001")  # note  # noqa: DDP002'


def test_line_syntax_knows_comments_strings_and_continuations():
    text = 'a = 1  # c\nb = """\nstill string\n"""\nc = 1 + \\\n    2\n'
    syntax = noqa.line_syntax(text)
    assert syntax.comment_start == {0: 7}
    assert syntax.no_comment_rows == {1, 2, 4}


def test_noqa_at_names_the_code_under_the_cursor():
    line = "x = f()  # noqa: DDP001, DDP003"
    assert noqa.noqa_at(line, line.index("DDP003") + 1).codes == ("DDP003",)
    assert noqa.noqa_at(line, line.index("noqa")).codes == ("DDP001", "DDP003")
    assert noqa.noqa_at(line, 0) is None
    assert noqa.noqa_at("x  # noqa", 5).bare


# -- fix-all ---------------------------------------------------------------------------------
def _diagnostic(code, row, edits, applicability="safe"):
    fix = Fix("fix it", tuple(edits), applicability)
    return Diagnostic(code, "msg", "x.py", Location(row, 1), Location(row, 2), fix=fix)


def _builder(text):
    return ActionBuilder(TextDocument("file:///x.py", text, 3), UTF16, versioned_edits=True, lsp_diagnostic=lambda d: None)


def test_fix_all_edits_only_the_changed_span_and_skips_unsafe_fixes():
    text = f"{ROCKET} = 1\nb = 2\nc = 3\n"
    insert = Edit("x", Location(2, 5), Location(2, 5))
    unsafe = Edit("zzz", Location(3, 1), Location(3, 2))
    action = _builder(text).fix_all(
        [_diagnostic("DDP002", 2, [insert]), _diagnostic("DDP001", 3, [unsafe], "unsafe")], unsafe=False
    )
    [change] = action.edit.document_changes
    assert change.text_document.version == 3
    [edit] = change.edits
    assert (edit.range.start, edit.range.end, edit.new_text) == (pos(1, 4), pos(1, 4), "x")


def test_fix_all_is_absent_without_safe_fixes():
    unsafe = Edit("zzz", Location(1, 1), Location(1, 2))
    assert _builder("a\n").fix_all([_diagnostic("DDP001", 1, [unsafe], "unsafe")], unsafe=False) is None
    assert _builder("a\n").fix_all([_diagnostic("DDP001", 1, [unsafe], "unsafe")], unsafe=True) is not None


# -- crash containment -----------------------------------------------------------------------
class PanicException(BaseException):
    """Stands in for pyo3's PanicException (libcst's native parser), a BaseException."""


def test_a_panic_in_the_engine_is_one_crashed_result(monkeypatch):
    import ddplint.lsp.analysis as analysis

    def panicking(*args, **kwargs):
        raise PanicException("the native parser panicked")

    monkeypatch.setattr(analysis, "lint_source", panicking)
    outcome = analysis.run_engine("import torch\n", "x.py", ())
    assert outcome.diagnostics == ()
    assert "PanicException: the native parser panicked" in outcome.crash


def test_keyboard_interrupt_is_not_swallowed(monkeypatch):
    import ddplint.lsp.analysis as analysis

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(analysis, "lint_source", interrupted)
    with pytest.raises(KeyboardInterrupt):
        analysis.run_engine("import torch\n", "x.py", ())


@pytest.mark.asyncio
async def test_a_worker_process_that_dies_costs_one_result_and_is_replaced():
    import asyncio
    import os
    import signal

    from ddplint.lsp.worker import AnalysisWorker

    source = "import torch.nn as nn\nmodel = nn.DataParallel(nn.Linear(2, 2))\n"
    worker = AnalysisWorker(timeout_s=120)
    try:
        assert [d.code for d in (await worker.analyse(source, "x.py", ["DDP003"])).diagnostics] == ["DDP003"]
        # What a segfault in native code looks like from the server: the process is gone.
        pending = asyncio.ensure_future(worker.analyse(source * 400, "x.py", ["DDP003"]))
        await asyncio.sleep(0.05)
        os.kill(worker.pid, signal.SIGKILL)
        outcome = await pending
        assert outcome.diagnostics == () and "process died" in outcome.crash
        assert [d.code for d in (await worker.analyse(source, "x.py", ["DDP003"])).diagnostics] == ["DDP003"]
    finally:
        worker.close()


_TIDY_PROBE = """
import gc, weakref
from ddplint.lsp import worker

class Cycle:
    def __init__(self):
        self.me = self

worker._tidy_heap()                      # the first tidy: everything alive is frozen
kept = [Cycle()]
worker._tidy_heap()                      # kept[0] is alive: frozen with the rest
ghost = weakref.ref(kept[0])
kept.clear()                             # now cyclic garbage, but frozen: not collected
worker._tidy_heap()
assert ghost() is not None
made_since = Cycle()
gone = weakref.ref(made_since)
del made_since
worker._tidy_heap()                      # garbage made since the last freeze is collected at once
assert gone() is None and ghost() is not None
for _ in range(worker.FULL_COLLECTION_EVERY):
    worker._tidy_heap()                  # and now and then everything is collected
assert ghost() is None
print("ok")
"""


def test_the_worker_freezes_what_it_keeps_and_still_collects_what_it_drops():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", _TIDY_PROBE], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


_RELEASE_PROBE = """
import gc, weakref
from pathlib import Path
from ddplint.lsp import worker
from ddplint.lsp.analysis import PARSER

worker.FULL_COLLECTION_EVERY = 10**9     # never: what is freed here is freed without it
text = Path("examples/ddp002_missing_set_epoch_buggy.py").read_text()
codes = ("DDP001", "DDP002")
worker.run_engine_by_codes(text, "t.py", codes)
first_scopes = [weakref.ref(records.scope) for records, _ in PARSER.statement_facts._kept.values()]
for version in range(12):                # every statement replaced, long enough to be dropped
    edited = text.replace("def ", f"def v{version}_")
    worker.run_engine_by_codes(edited, "t.py", codes)
assert first_scopes and all(scope() is None for scope in first_scopes)
print("ok")
"""


def test_the_worker_frees_the_records_of_replaced_statements_without_a_full_collection():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).parent.parent
    result = subprocess.run([sys.executable, "-c", _RELEASE_PROBE], capture_output=True, text=True, timeout=300, cwd=root)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


# -- the diagnostic's text ---------------------------------------------------------------------------
def test_editor_message_is_the_short_line_then_the_findings_why():
    """Lists (and Neovim's virtual text) show the first line; the hover shows the why below it."""
    from ddplint.lsp.convert import to_lsp_diagnostic
    from ddplint.lsp.rule_docs import RuleLinks

    document = TextDocument("file:///x.py", "for epoch in range(3):\n    pass\n", 1)
    at = Location(1, 1)
    short = Diagnostic("DDP002", "`sampler` never gets set_epoch(epoch)", "x.py", at, at, explanation="every epoch replays")
    shown = to_lsp_diagnostic(short, document, UTF16, RuleLinks()).message
    assert shown == "`sampler` never gets set_epoch(epoch)\n\nevery epoch replays"
    plain = Diagnostic("DDP000", "syntax error: invalid syntax", "x.py", at, at)
    assert to_lsp_diagnostic(plain, document, UTF16, RuleLinks()).message == "syntax error: invalid syntax"


# -- severity ----------------------------------------------------------------------------------
def _finding(code: str, message: str = "m", severity: str = "error") -> Diagnostic:
    return Diagnostic(code, message, "t.py", Location(1, 1), Location(1, 2), severity=severity)


@pytest.mark.parametrize(
    "setting, rule_level, expected",
    [
        ("warning", "error", types.DiagnosticSeverity.Warning),
        ("hint", "error", types.DiagnosticSeverity.Hint),
        ("information", "warning", types.DiagnosticSeverity.Information),
        ("rule", "error", types.DiagnosticSeverity.Error),
        ("rule", "warning", types.DiagnosticSeverity.Warning),
    ],
)
def test_the_severity_setting_picks_the_level_of_rule_findings(setting, rule_level, expected):
    assert lsp_severity(_finding("DDP001", severity=rule_level), setting) == expected


@pytest.mark.parametrize("setting", ["warning", "hint", "rule"])
def test_syntax_errors_are_errors_whatever_the_setting(setting):
    syntax_error = _finding("DDP000", SYNTAX_ERROR_PREFIX + "'(' was never closed", severity="warning")
    assert lsp_severity(syntax_error, setting) == types.DiagnosticSeverity.Error


def test_an_unknown_severity_setting_is_logged_and_the_default_kept():
    logged = []
    options = Options()
    options.update({"severity": "fatal"}, lambda kind, text: logged.append((kind, text)))
    assert options.severity == "warning"
    assert logged and "severity='fatal'" in logged[0][1]
