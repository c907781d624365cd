"""`ddplint lsp` with DDP003's check replaced by one that raises: a bug in one rule, for
tests/test_lsp_crash.py. Patched here, in the server's own process, so the product code carries no
test hooks."""

import sys

from ddplint.lsp import main
from ddplint.rules import RULES_BY_CODE


def _broken_check(facts):
    raise ZeroDivisionError("injected by lsp_broken_rule_server")


object.__setattr__(RULES_BY_CODE["DDP003"], "check", _broken_check)  # Rule is a frozen dataclass
sys.exit(main(sys.argv[1:]))
