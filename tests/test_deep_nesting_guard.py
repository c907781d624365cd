"""The nesting guard in front of libcst's native parser holds whatever recursion limit is in force.

CPython >= 3.11's compiler refuses code nested deeper than about three times the recursion limit,
and the screen relied on that refusal. A raised limit (hypothesis raises it around every example it
runs, the deep-stack retry raises it to DEEP_RECURSION_LIMIT, a program embedding ddplint may raise
it) let a 6,000-long attribute chain through to libcst, whose parser then overflowed the C stack
and killed the interpreter: no traceback, the whole test run gone. Those checks run in a child
interpreter, since the failure is a crash of the process itself.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest

from ddplint.engine import DEEP_RECURSION_LIMIT, on_deep_stack


def _lint_with_recursion_limit(limit: int, source: str) -> subprocess.CompletedProcess[str]:
    program = textwrap.dedent(
        f"""
        import sys
        sys.setrecursionlimit({limit})
        from ddplint.engine import lint_source
        for d in lint_source({source!r}, "deep.py"):
            print(d.code, d.message)
        """
    )
    return subprocess.run([sys.executable, "-X", "faulthandler", "-c", program], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("limit", [2_100, DEEP_RECURSION_LIMIT], ids=["hypothesis-raised", "deep-stack"])
def test_deep_chain_is_one_ddp000_line_under_a_raised_recursion_limit(limit: int) -> None:
    done = _lint_with_recursion_limit(limit, "DataParallel = 1\nx = a" + ".b" * 6_000 + "\n")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["DDP000 cannot parse: code nested too deeply"], done.stdout


def test_the_screen_refuses_the_same_depths_whatever_the_limit() -> None:
    """A file the compiler accepts at the default limit is still analysed under a raised one."""
    done = _lint_with_recursion_limit(2_100, "import torch.nn as nn\nx = a" + ".b" * 700 + "\nm = nn.DataParallel(m)\n")
    assert done.returncode == 0, done.stderr[-2000:]
    assert [line.split()[0] for line in done.stdout.splitlines()] == ["DDP003"], done.stdout


def test_overlapping_deep_runs_put_the_recursion_limit_back() -> None:
    """Two deep analyses on two threads, the first ending first: once both are done, the limit is
    the one from before (each restoring the value it had seen left the deep limit in force)."""
    before = sys.getrecursionlimit()
    first_running, second_running, first_done = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        first_running.set()
        assert second_running.wait(30)

    def second() -> None:
        second_running.set()
        assert first_done.wait(30)

    def run_first() -> None:
        on_deep_stack(first)
        first_done.set()

    threads = [threading.Thread(target=run_first)]
    threads[0].start()
    assert first_running.wait(30)
    threads.append(threading.Thread(target=on_deep_stack, args=(second,)))
    threads[1].start()
    for thread in threads:
        thread.join(60)
    assert sys.getrecursionlimit() == before
