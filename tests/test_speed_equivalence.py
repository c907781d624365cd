"""With any --jobs and any cache state, a run's findings are those of a fresh serial run."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddplint.api import lint_paths
from ddplint.cache import ResultCache
from ddplint.rules import select_rules

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FILES = sorted(EXAMPLES.glob("ddp00[1-4]_*.py"))
# What an edit may do to a file: nothing new, a new finding, a syntax error, a file of its own.
CHANGES = ("\nmodel = nn.DataParallel(model)\n", "\nprint 'python 2'\n", "\n# comment\n", "")


def run(root: Path, cache, jobs: int):
    rules = select_rules()
    return [(d.filename, d.location.row, d.code, d.message) for d in lint_paths([str(root)], rules, [], jobs=jobs, cache=cache)]


steps = st.lists(
    st.tuples(st.integers(0, len(FILES) - 1), st.sampled_from(CHANGES), st.sampled_from((1, 2)), st.booleans()),
    min_size=1, max_size=4,
)


@pytest.mark.slow  # a minute of random histories: the full suite runs it
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_jobs_and_cache_state_never_change_the_findings(history):
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch, "project")
        root.mkdir()
        for path in FILES:
            shutil.copy(path, root / path.name)
        cache_dir = Path(scratch, "cache")
        for index, change, jobs, use_cache in history:
            target = root / FILES[index].name
            if change:
                target.write_text(target.read_text() + change)
            else:
                os.utime(target)  # touched: same content, new mtime
            cache = ResultCache(cache_dir, "test") if use_cache else None
            found = run(root, cache, jobs)
            if cache is not None:
                cache.save()
            assert found == run(root, None, 1)
