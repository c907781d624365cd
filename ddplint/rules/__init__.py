"""The rule registry: every rule's code, name and default, and the module that defines its `RULE`.

Selecting rules, checking a configuration, keying the results cache and naming findings need only
the entries below. Loading a rule imports its check, and with it the analysis and libcst (~0.2 s,
more than the rest of a run over unchanged files): only a run that analyses a file pays for that.
`ALL_RULES` and `RULES_BY_CODE` load every rule on first use.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from ddplint.diagnostics import ERROR_CODE

if TYPE_CHECKING:
    from ddplint.rules.base import Finding, FindingFix, NodeEdit, Rule

    ALL_RULES: tuple[Rule, ...]
    RULES_BY_CODE: dict[str, Rule]


@dataclass(frozen=True)
class RuleEntry:
    """A rule as the registry knows it before loading it."""

    code: str
    name: str
    default_enabled: bool = True

    @property
    def module(self) -> str:
        """The rule's module: its code and name (`ddp003_data_parallel`)."""
        return f"{self.code.lower()}_{self.name.replace('-', '_')}"

    def load(self) -> Rule:
        return _load(self.code)


# The order here is the order rules are listed in. tests/test_layers.py fails when a module in
# this package is missing here, or defines another code or name than its entry.
REGISTRY: tuple[RuleEntry, ...] = (
    RuleEntry("DDP001", "missing-distributed-sampler"),
    RuleEntry("DDP002", "missing-set-epoch"),
    RuleEntry("DDP003", "data-parallel"),
    RuleEntry("DDP004", "rank-zero-only-preprocessing"),
    RuleEntry("DDP005", "all-ranks-one-device"),
    RuleEntry("DDP006", "shuffle-with-sampler"),
    RuleEntry("DDP007", "collective-in-rank-branch"),
    RuleEntry("DDP008", "load-without-map-location"),
    RuleEntry("DDP009", "unsharded-iterable-dataset"),
    RuleEntry("DDP010", "rank-zero-only-evaluation"),
    RuleEntry("DDP011", "per-rank-sampler-seed"),
    RuleEntry("DDP012", "loader-starves-gpu", default_enabled=False),
    RuleEntry("DDP013", "dataset-download-on-every-rank"),
    RuleEntry("DDP014", "unreduced-metric"),
    RuleEntry("DDP015", "accumulation-without-no-sync"),
    RuleEntry("DDP016", "module-forward-bypasses-ddp"),
)
ENTRIES_BY_CODE = {entry.code: entry for entry in REGISTRY}

# Selectable codes that are not rules with a check: findings about ddplint's own noqa
# comments, made where those comments are read (ddplint/noqa.py). Off by default, like ruff's
# RUF100; `load_rules` passes them over (callers ask `UNUSED_NOQA_CODE in codes`).
UNUSED_NOQA_CODE = "DDP090"
META_ENTRIES: tuple[RuleEntry, ...] = (RuleEntry(UNUSED_NOQA_CODE, "unused-noqa", default_enabled=False),)
META_BY_CODE = {entry.code: entry for entry in META_ENTRIES}
SELECTABLE = REGISTRY + META_ENTRIES
RULE_MODULES = tuple(entry.module for entry in REGISTRY)

_LOADED: dict[str, Rule] = {}


def _load(code: str) -> Rule:
    rule = _LOADED.get(code)
    if rule is None:
        module = importlib.import_module(f"{__name__}.{ENTRIES_BY_CODE[code].module}")
        rule = _LOADED[code] = module.RULE
    return rule


def load_rules(codes: Iterable[str]) -> tuple[Rule, ...]:
    """The rules with these codes, loaded (their checks imported), in the order given; meta codes
    (META_ENTRIES) have no rule to load and are passed over."""
    return tuple(_load(code) for code in codes if code not in META_BY_CODE)


# What a rule module is written with, re-exported (importing them imports libcst).
_FROM_BASE = ("Finding", "FindingFix", "NodeEdit", "Rule")


def __getattr__(name: str) -> Any:
    # PEP 562: `ALL_RULES` / `RULES_BY_CODE` load every rule, once, when first asked for.
    if name in _FROM_BASE:
        value = getattr(importlib.import_module(f"{__name__}.base"), name)
    elif name == "ALL_RULES":
        value = load_rules(ENTRIES_BY_CODE)
    elif name == "RULES_BY_CODE":
        value = {rule.code: rule for rule in load_rules(ENTRIES_BY_CODE)}
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


class UnknownSelector(ValueError):
    pass


def select_codes(select: Optional[Sequence[str]] = None, ignore: Optional[Sequence[str]] = None) -> tuple[str, ...]:
    """Codes of the rules chosen by codes or prefixes (`DDP001`, `DDP00`, `DDP`, `ALL`) or names,
    ruff style: `select` replaces the default set, `ignore` removes from it. Registry order."""
    if select:
        chosen = {entry.code for selector in select for entry in _matching(selector)}
    else:
        chosen = {entry.code for entry in REGISTRY if entry.default_enabled}
    for selector in ignore or ():
        chosen -= {entry.code for entry in _matching(selector)}
    return tuple(entry.code for entry in SELECTABLE if entry.code in chosen)


def select_rules(select: Optional[Sequence[str]] = None, ignore: Optional[Sequence[str]] = None) -> tuple[Rule, ...]:
    """`select_codes`, loaded."""
    return load_rules(select_codes(select, ignore))


def _matching(selector: str) -> list[RuleEntry]:
    wanted = selector.strip().upper()
    if wanted == "ALL":
        return list(SELECTABLE)
    matches = [entry for entry in SELECTABLE if entry.code.startswith(wanted) or entry.name == selector.strip()]
    if not matches:
        raise UnknownSelector(f"unknown rule selector {selector!r} (try `ddplint rule --all`)")
    return matches


__all__ = [
    "ALL_RULES", "ENTRIES_BY_CODE", "ERROR_CODE", "META_BY_CODE", "META_ENTRIES", "REGISTRY", "SELECTABLE", "UNUSED_NOQA_CODE", "RULES_BY_CODE", "RULE_MODULES", "Finding", "FindingFix",
    "NodeEdit", "Rule", "RuleEntry", "UnknownSelector", "load_rules", "select_codes", "select_rules",
]
