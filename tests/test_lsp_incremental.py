"""The language server's incremental parse gives the findings of a fresh full analysis."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from case_files import CASE_FILES
from ddplint.analysis.facts import ModuleFacts, build_facts
from ddplint.analysis.syntax import walk
from ddplint.engine import lint_source
from ddplint.lsp.incremental import StatementParser
from ddplint.recovery import top_level_statement_starts
from ddplint.screen import compile_screen

ROOT = Path(__file__).parent.parent
EXAMPLES = sorted(ROOT.glob("examples/*_buggy.py"))
FRAGMENTS = ("print(f'epoch {e", "x = 1", "global x", "from __future__ import annotations", "def f(a: Only) -> None: ...", "    pass", "# a comment", "", "def helper(a):", "@decorator",
             "else:", "for batch in loader:", "sampler.set_epoch(epoch)", "'''", "    return (", ")", "\t y = 2",
             "z = 1 + \\", '"""', "class Helper:")


def test_joined_module_is_the_text_and_has_the_same_findings_on_every_corpus_file():
    parser = StatementParser()
    files = CASE_FILES[:120] + EXAMPLES
    for path in files:
        data = path.read_bytes()
        try:
            expected = cst.parse_module(data).code
        except cst.ParserSyntaxError:
            continue
        assert parser.parse(data).code == expected, path
        assert lint_source(data, str(path), parser=parser) == lint_source(data, str(path)), path
    assert parser.reused > 0 and parser.parsed > 0


def test_an_edit_reparses_only_the_statement_it_touched():
    parser = StatementParser()
    text = EXAMPLES[0].read_text()
    parser.parse(text.encode())
    before = parser.parsed
    edited = text.replace("def main():\n", "def main():\n    unused = 1\n", 1)
    assert edited != text
    assert parser.parse(edited.encode()).code == edited
    assert parser.parsed == before + 1


def test_a_repeated_statement_gets_its_own_nodes():
    parser = StatementParser()
    module = parser.parse(b"import torch.nn as nn\nm = nn.DataParallel(m)\nm = nn.DataParallel(m)\n")
    first, second = module.body[1], module.body[2]
    assert first is not second and first.body[0] is not second.body[0]


@st.composite
def edit_histories(draw):
    original = lines = draw(st.sampled_from(EXAMPLES)).read_text().split("\n")
    texts = []
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.integers(0, 4)) == 0:
            lines = original  # an undo: the next edit changes the text in two places
        row = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(("insert", "delete", "replace", "duplicate", "digit")))
        if kind == "insert":
            indent = draw(st.sampled_from(("", "    ", "        ")))
            lines = lines[:row] + [indent + draw(st.sampled_from(FRAGMENTS))] + lines[row:]
        elif kind == "delete":
            lines = lines[:row] + lines[row + 1 :]
        elif kind == "replace":
            lines = lines[:row] + [draw(st.sampled_from(lines))] + lines[row + 1 :]
        elif kind == "duplicate":
            end = min(len(lines), row + draw(st.integers(1, 8)))
            lines = lines[:end] + lines[row:end] + lines[end:]
        else:
            lines = lines[:row] + [lines[row] + str(draw(st.integers(0, 9)))] + lines[row + 1 :]
        texts.append("\n".join(lines))
    return texts


@pytest.mark.slow  # a minute of random histories: the full suite runs it
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(edit_histories())
def test_incremental_findings_equal_a_fresh_analysis_over_any_edit_history(texts):
    parser = StatementParser(max_kept_bytes=3000)  # small: statements also fall out of the cache
    for text in texts:
        assert lint_source(text, "train.py", parser=parser) == lint_source(text, "train.py")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(edit_histories())
def test_statement_starts_rescanned_around_a_change_equal_a_scan_of_the_whole_text(texts):
    parser = StatementParser()
    for text in texts:
        lines = text.encode().splitlines(keepends=True)
        assert parser.statement_starts(lines) == top_level_statement_starts(lines)


@pytest.mark.slow  # a minute of random histories: the full suite runs it
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(edit_histories())
def test_reused_statement_facts_equal_a_fresh_facts_pass_over_any_edit_history(texts):
    """Every record, not only the findings: the facts built from reused statement records are
    those of one walk over the same module (nodes by their place in it, scopes and contexts by
    what they hold)."""
    parser = StatementParser()
    for text in texts:
        try:
            module = parser.parse(text.encode())
        except cst.ParserSyntaxError:
            continue  # the engine repairs it first (recovery.py): the findings test covers that
        joined = build_facts(module, text, reuse=parser.statement_facts)
        assert _fingerprint(joined) == _fingerprint(build_facts(module, text))


def test_a_function_binding_a_module_name_through_global_keeps_the_facts_of_a_fresh_pass():
    """`global rank; rank = ...` in a function binds the module's name: that binding lives in the
    module's scope, so the statement is walked in each version of the module, not joined from
    the records of an earlier one (whose module scope is gone)."""
    parser = StatementParser()
    first = "import os\n\n\ndef setup():\n    global rank\n    rank = int(os.environ['RANK'])\n\n\nrank = 0\n"
    second = first.replace("rank = 0\n", "rank = 0\nfor step in range(3):\n    print(rank)\n")
    for text in (first, second):
        module = parser.parse(text.encode())
        joined = build_facts(module, text, reuse=parser.statement_facts)
        assert _fingerprint(joined) == _fingerprint(build_facts(module, text))


def test_an_edit_walks_only_the_statements_it_touched_and_the_facts_stay_those_of_a_fresh_pass():
    parser = StatementParser()
    text = EXAMPLES[0].read_text()
    statements = parser.statement_facts
    build_facts(parser.parse(text.encode()), text, reuse=statements)
    walked, reused = statements.walked, statements.reused
    defs = sum(isinstance(s, (cst.FunctionDef, cst.ClassDef)) for s in cst.parse_module(text).body)
    assert defs >= 2 and walked == defs and reused == 0
    edited = text.replace("def main():\n", "def main():\n    import os as unused\n", 1)
    module = parser.parse(edited.encode())
    facts = build_facts(module, edited, reuse=statements)
    assert (statements.walked, statements.reused) == (walked + 1, defs - 1)
    assert _fingerprint(facts) == _fingerprint(build_facts(module, edited))
    assert "os" in facts.imports.modules  # the import inside the edited function reached the module's table


def test_a_statement_repeated_in_one_module_gets_records_of_its_own():
    parser = StatementParser()
    text = "import torch\n\ndef f(x):\n    return torch.zeros(x)\n\ndef f(x):\n    return torch.zeros(x)\n"
    statements = parser.statement_facts
    for _ in range(2):
        module = parser.parse(text.encode())
        facts = build_facts(module, text, reuse=statements)
        assert _fingerprint(facts) == _fingerprint(build_facts(module, text))
        first, second = facts.functions
        assert first is not second and first.scope is not second.scope


def _fingerprint(facts: ModuleFacts) -> dict:
    """The facts with every node named by its place in a walk of the module and every scope by
    the order it is first met: equal for two passes that recorded the same things."""
    order = {id(node): place for place, node in enumerate(walk(facts.module))}
    scopes: dict[int, int] = {}
    described: dict[int, tuple] = {}

    def node(value):
        if value is None:
            return None
        if isinstance(value, cst.CSTNode):
            return order.get(id(value), ("not in the module", type(value).__name__))
        return repr(value)

    def body(statements):
        return (len(statements), node(statements[0]) if statements else None)

    def context(value):
        if value is None:
            return None
        return (scope(value.scope), tuple(node(loop.node) for loop in value.loops),
                tuple((node(branch), arm) for branch, arm in value.branches),
                tuple((body(statements), index) for statements, index in value.path))

    def scope(value):
        if value is None:
            return None
        if id(value) not in scopes:
            scopes[id(value)] = len(scopes)
            described[scopes[id(value)]] = ()  # while its own description is made
            described[scopes[id(value)]] = (
                value.kind, node(value.node), scope(value.parent), value.name, value.path_depth,
                context(value.defined_at),
                tuple((key, tuple(binding(b) for b in bindings)) for key, bindings in value.bindings.items()),
            )
        return scopes[id(value)]

    def binding(value):
        return (value.key, node(value.value), value.kind, node(value.node), scope(value.scope), value.index,
                value.item, tuple((node(branch), arm) for branch, arm in value.arms), context(value.context))

    def function(info):
        return (node(info.node), scope(info.scope), info.class_name, tuple(info.params),
                tuple((node(value), tuple((node(b), arm) for b, arm in arms)) for value, arms in info.returns))

    def names(mapping):
        return [(node_at, value) for node_at, value in ((order.get(key, key), value) for key, value in mapping.items())]

    imports = facts.imports
    return {
        "module": scope(facts.module_scope),
        "calls": [(node(site.node), context(site.context)) for site in facts.calls],
        "loops": [(node(site.node), context(site.context)) for site in facts.loops],
        "branches": [(node(site.node), context(site.context)) for site in facts.branches],
        "functions": [function(info) for info in facts.functions],
        "functions_by_name": {name: [facts.functions.index(f) for f in infos] for name, infos in facts.functions_by_name.items()},
        "classes": [(name, node(info.node), tuple(node(b) for b in info.bases), scope(info.scope))
                    for name, info in facts.classes.items()],
        "env_reads": [(key, node(value)) for key, value in facts.env_reads],
        "name_contexts": [(place, context(value)) for place, value in names(facts.name_contexts)],
        "assigned_to": names(facts.assigned_to),
        "imports": (sorted((k, sorted(v)) for k, v in imports.bindings.items()), list(imports.bindings),
                    list(imports.star_modules), sorted(imports.modules),
                    [(k, node(v)) for k, v in imports.aliases.items()], sorted(imports.local_names)),
        "scopes": described,
    }


def test_the_records_of_replaced_statements_are_let_go():
    """Editing one function over and over keeps the records (and trees) of its last versions
    only, not of every version."""
    parser = StatementParser()
    text = EXAMPLES[0].read_text()
    defs = sum(isinstance(s, (cst.FunctionDef, cst.ClassDef)) for s in cst.parse_module(text).body)
    for version in range(40):
        edited = text.replace("def main():\n", f"def main():\n    version = {version}\n", 1)
        build_facts(parser.parse(edited.encode()), edited, reuse=parser.statement_facts)
    assert len(parser.statement_facts._kept) <= defs + 8


# -- the compile screen, statement by statement ------------------------------------------------
def _screened_alike(parser: StatementParser, text: str) -> None:
    data = text.encode()
    assert parser.screen(data, "t.py") == compile_screen(data, "t.py"), text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(edit_histories())
def test_the_screen_by_statement_equals_the_screen_of_the_whole_text_over_any_edit_history(texts):
    """Same problem (CPython's message and position) or same names, for every text."""
    parser = StatementParser()
    for text in texts:
        _screened_alike(parser, text)


@pytest.mark.parametrize(
    "text",
    [
        # only the whole module knows: a future import after other code, a module-level `global`
        # after an assignment (also inside a top-level `if`), an encoding declared for every line
        "x = 1\n\nfrom __future__ import annotations\n",
        "x = 1\n\nglobal x\n",
        "x = 1\n\nif x:\n    global x\n",
        "# -*- coding: latin-1 -*-\nx = 1\n\ny = 'caf\xe9'\n",
        # a future import changes the names of every statement after it (annotations unevaluated)
        '"""Doc."""\nfrom __future__ import annotations\n\ndef f(a: OnlyInAnnotation) -> None:\n    pass\n',
        "def f(a: OnlyInAnnotation) -> None:\n    pass\n\nx: AlsoOnlyAnnotated = 1\n",
        # `global` in a function or a class is theirs alone
        "x = 1\n\ndef f():\n    global x\n    x = 2\n\nclass C:\n    global x\n",
    ],
)
def test_the_screen_by_statement_judges_module_wide_rules_over_the_whole_module(text):
    _screened_alike(StatementParser(), text)


def test_a_latin_1_file_is_screened_as_a_whole():
    data = "# -*- coding: latin-1 -*-\nx = 1\n\ny = 'caf\xe9'\n".encode("latin-1")
    assert StatementParser().screen(data, "t.py") == compile_screen(data, "t.py")
    assert compile_screen(data, "t.py")[0] is None


def test_an_edit_compiles_only_the_statement_it_touched(monkeypatch):
    import ddplint.screen as screen

    compiled: list[bytes] = []

    def counting(data: bytes, filename: str, flags: int = 0):
        compiled.append(data)
        return compile_screen(data, filename, flags)

    monkeypatch.setattr(screen, "compile_screen", counting)
    parser = StatementParser()
    text = EXAMPLES[0].read_text()
    parser.screen(text.encode(), "t.py")
    statements = len(compiled)
    assert statements >= 3
    edited = text.replace("def main():\n", "def main():\n    unused = 1\n", 1)
    compiled.clear()
    assert parser.screen(edited.encode(), "t.py") == compile_screen(edited.encode(), "t.py")
    assert len(compiled) == 1 and compiled[0].startswith(b"def main():")
