"""The rule registry: every rule module contributes one `RULE`."""

from __future__ import annotations

import importlib

from ddplint.diagnostics import ERROR_CODE
from ddplint.rules.base import Finding, FindingFix, NodeEdit, Rule

# One module per rule, each defining `RULE`; the order here is the order rules are listed in.
# tests/test_layers.py fails when a module in this package is missing here.
RULE_MODULES = (
    "ddp001_missing_distributed_sampler",
    "ddp002_missing_set_epoch",
    "ddp003_data_parallel",
    "ddp004_rank_zero_only_preprocessing",
    "ddp005_all_ranks_one_device",
    "ddp006_shuffle_with_sampler",
    "ddp007_collective_in_rank_branch",
    "ddp008_load_without_map_location",
    "ddp009_unsharded_iterable_dataset",
    "ddp010_rank_zero_only_evaluation",
    "ddp011_per_rank_sampler_seed",
    "ddp012_loader_starves_gpu",
)
ALL_RULES: tuple[Rule, ...] = tuple(importlib.import_module(f"{__name__}.{name}").RULE for name in RULE_MODULES)
RULES_BY_CODE = {rule.code: rule for rule in ALL_RULES}


class UnknownSelector(ValueError):
    pass


def select_rules(select=None, ignore=None) -> tuple[Rule, ...]:
    """Rules chosen by codes or prefixes (`DDP001`, `DDP00`, `DDP`, `ALL`), ruff style:
    `select` replaces the default set, `ignore` removes from it."""
    if select:
        chosen = {rule.code for selector in select for rule in _matching(selector)}
    else:
        chosen = {rule.code for rule in ALL_RULES if rule.default_enabled}
    for selector in ignore or ():
        chosen -= {rule.code for rule in _matching(selector)}
    return tuple(rule for rule in ALL_RULES if rule.code in chosen)


def _matching(selector: str) -> list[Rule]:
    wanted = selector.strip().upper()
    if wanted == "ALL":
        return list(ALL_RULES)
    matches = [rule for rule in ALL_RULES if rule.code.startswith(wanted) or rule.name == selector.strip()]
    if not matches:
        raise UnknownSelector(f"unknown rule selector {selector!r} (try `ddplint rule --all`)")
    return matches


__all__ = ["ALL_RULES", "ERROR_CODE", "Finding", "FindingFix", "NodeEdit", "RULES_BY_CODE", "Rule", "UnknownSelector", "select_rules"]
