"""`screen.rules_to_run`, the engine's one screen: which rules can say anything about a file, on
which bytes, and the file's own problems, with the project asked only through `ProjectQuestions`
(here a fake that records what it was asked)."""

from __future__ import annotations

from ddplint.recovery import SYNTAX_ERROR_PREFIX
from ddplint.rules import ALL_RULES
from ddplint.screen import NULL_BYTE_MESSAGE, rules_to_run
from ddplint.source import MAX_ANALYSED_BYTES

USES_A_PROJECT_LOADER = b"from helpers import make_loader\nloader = make_loader(ds)\nfor e in range(2):\n    for b in loader:\n        pass\n"
OWN_LOADER = b"from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=4)\n"


class FakeProject:
    def __init__(self, targets=(), imports=False, offers=False, starts=False):
        self.targets, self.imports, self.offers, self.starts = list(targets), imports, offers, starts
        self.asked: list[str] = []

    def imported_targets(self, path, data):
        self.asked.append("imported_targets")
        return self.targets

    def may_import_project(self, path, data):
        self.asked.append("may_import_project")
        return self.imports

    def offers_any_of(self, path, data, names):
        self.asked.append("offers_any_of")
        return self.offers

    def may_call_distributed_helper(self, path, data, names):
        self.asked.append("may_call_distributed_helper")
        return self.starts


def _codes(result) -> list[str]:
    return [rule.code for rule in result.rules]


def test_a_file_without_a_trigger_costs_one_question_and_gets_no_rule():
    project = FakeProject()
    result = rules_to_run(b"x = 1\nprint(x)\n", "t.py", ALL_RULES, project)
    assert (result.rules, result.problems) == ((), ())
    assert project.asked == ["imported_targets"]


def test_a_project_loader_brings_the_distributed_rules_only_where_the_project_offers_it():
    target = [("helpers.py", "make_loader")]
    offered = rules_to_run(USES_A_PROJECT_LOADER, "t.py", ALL_RULES, FakeProject(target, offers=True, starts=True))
    assert "DDP002" in _codes(offered)
    assert all(rule.distributed_only for rule in offered.rules)
    refused = rules_to_run(USES_A_PROJECT_LOADER, "t.py", ALL_RULES, FakeProject(target, offers=False, starts=True))
    assert refused.rules == []


def test_a_too_large_file_is_reported_only_where_something_links_it():
    big = b"x = 1\n" + b"# padding\n" * (MAX_ANALYSED_BYTES // 10 + 1)
    unlinked = rules_to_run(big, "t.py", ALL_RULES, FakeProject([("helpers.py", "")]))
    assert (unlinked.rules, unlinked.problems) == ((), ())
    linked = rules_to_run(big, "t.py", ALL_RULES, FakeProject([("helpers.py", "")], imports=True))
    assert linked.rules == ()
    assert [problem.reason.split(":")[0] for problem in linked.problems] == ["not analysed"]


def test_a_broken_statement_is_cut_out_and_the_rest_screened():
    data = OWN_LOADER + b"def broken(:\n    pass\n"
    result = rules_to_run(data, "t.py", ALL_RULES)
    assert result.data != data and b"broken(:" not in result.data
    assert result.rules and result.rules == rules_to_run(result.data, "t.py", ALL_RULES).rules
    assert [(p.reason.startswith(SYNTAX_ERROR_PREFIX), p.row) for p in result.problems] == [(True, 3)]


def test_a_null_byte_in_a_comment_is_blanked_and_reported_at_its_place():
    data = OWN_LOADER.replace(b"\n", b"  # a\0b\n", 1)
    result = rules_to_run(data, "t.py", ALL_RULES)
    assert b"\0" not in result.data and len(result.data) == len(data)
    assert result.rules and result.rules == rules_to_run(result.data, "t.py", ALL_RULES).rules
    assert [(p.reason, p.row, p.column) for p in result.problems] == [(NULL_BYTE_MESSAGE, 1, data.index(b"\0") + 1)]


def test_a_broken_file_nothing_links_is_left_alone():
    project = FakeProject([("helpers.py", "")])
    result = rules_to_run(b"import helpers\ndef f(:\n    pass\n", "t.py", ALL_RULES, project)
    assert (result.rules, result.problems) == ((), ())
    assert project.asked == ["imported_targets", "may_import_project"]
