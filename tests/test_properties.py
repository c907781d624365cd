"""Property-based: whatever source the engine is fed, it never raises, no rule crashes, and the
findings do not depend on the number of worker processes or on the cache being warm."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from case_files import CASE_FILES
from ddplint.api import lint_paths
from ddplint.cache import ResultCache
from ddplint.engine import lint_source
from ddplint.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent.parent
CORPUS = CASE_FILES + sorted((ROOT / "examples").glob("*.py"))
TEXTS = [path.read_text(encoding="utf-8") for path in CORPUS]
# Every rule, including the opt-in ones: a crash in any of them counts.
RULES = ALL_RULES

# Fragments that steer mutants towards what the rules look at, so that mutations exercise the
# analysis rather than stopping at the screen.
FRAGMENTS = [
    "import torch.distributed as dist\n", "dist.init_process_group('gloo')\n", "rank = dist.get_rank()\n",
    "if rank == 0:\n", "    dist.barrier()\n", "loader = DataLoader(ds, shuffle=True)\n",
    "sampler = DistributedSampler(ds)\n", "for epoch in range(3):\n", "    for batch in loader:\n",
    "        pass\n", "model = nn.DataParallel(model)\n", "sampler.set_epoch(epoch)\n", "else:\n",
    "def f(x):\n", "    return DataLoader(x)\n", "class T:\n", "    def run(self):\n", "lambda: (", ")\n",
    "async def g():\n", "    async for b in loader:\n", "match x:\n", "    case 0:\n", "\t", "\\\n", "'''",
    "#", "\x00", "\ufeff", "é", "(" * 40, "[" * 300, "1+" * 3000 + "1\n",
]

mutations = st.lists(
    st.tuples(
        st.sampled_from(["insert", "delete", "replace", "truncate", "indent"]),
        st.floats(0, 1, allow_nan=False),
        st.sampled_from(FRAGMENTS) | st.text(max_size=12),
    ),
    min_size=1,
    max_size=8,
)


def apply(text: str, steps) -> str:
    for op, where, fragment in steps:
        at = int(where * len(text))
        if op == "insert":
            text = text[:at] + fragment + text[at:]
        elif op == "delete":
            text = text[:at] + text[at + len(fragment) + 1 :]
        elif op == "replace":
            text = text[:at] + fragment + text[at + len(fragment) :]
        elif op == "truncate":
            text = text[:at]
        else:
            line_start = text.rfind("\n", 0, at) + 1
            text = text[:line_start] + "    " + text[line_start:]
    return text


def assert_clean(source, filename="mutant.py"):
    errors = []
    diagnostics = lint_source(source, filename, RULES, errors)
    assert errors == [], errors[0].detail
    for d in diagnostics:
        assert d.location.row >= 1 and d.location.column >= 1
        assert "\n" not in d.message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(TEXTS), steps=mutations)
def test_mutated_sources_never_raise(base, steps):
    assert_clean(apply(base, steps))


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=400).map(lambda junk: b"import torch.distributed\nDataLoader\n" + junk))
def test_arbitrary_bytes_never_raise(data):
    assert_clean(data)


@settings(max_examples=30, deadline=None)
@given(depth=st.integers(1, 20000), kind=st.sampled_from(["paren", "list", "plus", "attr", "not", "call", "lambda"]))
def test_deep_nesting_never_raises(depth, kind):
    nested = {
        "paren": "(" * depth + "1" + ")" * depth,
        "list": "[" * depth + "]" * depth,
        "plus": "+".join(["1"] * depth),
        "attr": "a" + ".b" * depth,
        "not": "not " * depth + "x",
        "call": "f(" * depth + ")" * depth,
        "lambda": "lambda: " * depth + "0",
    }[kind]
    assert_clean("import torch.distributed as dist\nfrom torch.utils.data import DataLoader\nx = " + nested + "\n")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), steps=mutations)
def test_findings_do_not_depend_on_jobs_or_cache(seed, steps):
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for number in range(6):
            (root / f"mutant_{number}.py").write_text(apply(rng.choice(TEXTS), steps), encoding="utf-8")
        key = ",".join(rule.code for rule in RULES)

        def results(jobs, cache=None):
            return [(d.filename, d.location, d.code, d.message) for d in lint_paths([folder], RULES, [], jobs=jobs, cache=cache)]

        serial = results(1)
        assert results(2) == serial
        cold = ResultCache(root / ".cache", key)
        assert results(2, cold) == serial
        cold.save()
        assert results(2, ResultCache(root / ".cache", key)) == serial
