"""The rules added after the first release are registered and on by default."""

from __future__ import annotations

from ddplint.rules import RULES_BY_CODE, select_codes


def test_new_rules_are_registered_and_on_by_default():
    assert {"DDP013", "DDP014", "DDP015", "DDP016"} <= set(select_codes())
    assert RULES_BY_CODE["DDP015"].name == "accumulation-without-no-sync"
