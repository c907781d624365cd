"""`ddplint lsp` with DDP003's check replaced by a broken one, for tests/test_lsp_crash.py: it
raises, or with DDPLINT_TEST_BROKEN_RULE=hang never returns. Patched here, at import, so that the
server's analysis process (started with "spawn", which imports this module again) gets the same
broken rule, and the product code carries no test hooks."""

import os
import sys
import time

from ddplint.lsp import main
from ddplint.rules import RULES_BY_CODE


def _raising_check(facts):
    raise ZeroDivisionError("injected by lsp_broken_rule_server")


def _hanging_check(facts):
    while True:
        time.sleep(1)


_broken = _hanging_check if os.environ.get("DDPLINT_TEST_BROKEN_RULE") == "hang" else _raising_check
object.__setattr__(RULES_BY_CODE["DDP003"], "check", _broken)  # Rule is a frozen dataclass

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
