"""The language server's analysis process with its heap tidy held back, for
tests/test_lsp_reply_first.py: `tidy_after_analysis` waits until the file that
DDPLINT_TEST_TIDY_RELEASE names exists (or 120 s), then tidies. Named as the module the
worker's process runs (`worker.ENTRY`), it patches the worker there and serves with its `serve`."""

import os
import time

from ddplint.lsp import worker
from ddplint.lsp.worker import serve  # noqa: F401  (what the analysis process runs)

_tidy = worker.tidy_after_analysis


def _held_tidy() -> None:
    release = os.environ["DDPLINT_TEST_TIDY_RELEASE"]
    deadline = time.monotonic() + 120
    while not os.path.exists(release) and time.monotonic() < deadline:
        time.sleep(0.01)
    with open(release + ".tidied", "a") as tidied:
        tidied.write("x")
    _tidy()


worker.tidy_after_analysis = _held_tidy
