"""Shortcuts the facts take for speed answer exactly what the plain computation answers."""

from __future__ import annotations

import random
from pathlib import Path

import libcst as cst

from case_files import CASE_FILES
from ddplint.analysis.facts import build_facts
from ddplint.analysis.model import ModuleModel
from ddplint.analysis.training import steps_the_model

ROOT = Path(__file__).parent.parent
FILES = sorted(ROOT.glob("examples/*.py")) + CASE_FILES


def test_a_lazy_reaching_test_answers_as_the_set_of_functions_reaching_a_call():
    checked = 0
    for path in FILES:
        try:
            module = cst.parse_module(path.read_bytes())
        except Exception:
            continue
        facts = build_facts(module)
        model = ModuleModel(facts)
        if len(facts.functions) < 2:
            continue
        predicates = (
            steps_the_model,
            lambda site, model=model: model.ranks.collective_name(site) is not None,
            lambda site, model=model: model.data.work.work_of(site) is not None,
            lambda site: site.name in ("print", "load"),
        )
        for predicate in predicates:
            expected = facts.functions_reaching(predicate)
            asked = list(facts.functions)
            random.Random(path.name).shuffle(asked)  # answers must not depend on the order asked
            lazy = facts.reaching_test(predicate)
            assert {f for f in asked if f in lazy} == expected, path
            checked += bool(expected) and len(expected) < len(facts.functions)
    assert checked > 20  # files where some functions reach the call and others do not
