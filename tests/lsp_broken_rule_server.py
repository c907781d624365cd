"""`ddplint lsp` with DDP003's check replaced by a broken one, for tests/test_lsp_crash.py: it
raises, or with DDPLINT_TEST_BROKEN_RULE=hang never returns. Patched here, at import, and this
module named as the one the server's analysis process runs (`worker.ENTRY`: it imports this
module, which breaks the rule there too, and serves with the worker's own `serve`)."""

import os
import sys
import time

from ddplint.lsp import main, worker
from ddplint.lsp.worker import serve  # noqa: F401  (what the analysis process runs)
from ddplint.rules import RULES_BY_CODE


def _raising_check(facts):
    raise ZeroDivisionError("injected by lsp_broken_rule_server")


def _hanging_check(facts):
    while True:
        time.sleep(1)


_broken = _hanging_check if os.environ.get("DDPLINT_TEST_BROKEN_RULE") == "hang" else _raising_check
object.__setattr__(RULES_BY_CODE["DDP003"], "check", _broken)  # Rule is a frozen dataclass

if __name__ == "__main__":
    worker.ENTRY = "lsp_broken_rule_server"
    sys.exit(main(sys.argv[1:]))
