"""Metrics counted over one rank's shard of an evaluation set, and whether they are reduced
across ranks before they are reported (DDP014)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import libcst as cst

from ddplint.analysis.records import LoopSite
from ddplint.analysis.syntax import walk
from ddplint.analysis.torch_api import (
    METRIC_REDUCERS,
    REPORTING_CALLS,
    SYNCING_METRIC_PACKAGES,
    VALUE_PRESERVING_CALLS,
)

if TYPE_CHECKING:
    from ddplint.analysis.facts import ModuleFacts
    from ddplint.analysis.loaders import LoaderInfo
    from ddplint.analysis.model import ModuleModel
    from ddplint.analysis.records import CallSite


@dataclass(frozen=True)
class ShardReport:
    """A report of counts summed over one rank's shard: where they are counted, where reported."""

    loop: "LoopSite"
    report: "CallSite"
    counts: tuple[str, ...]


def sharded_evaluation_loaders(model: "ModuleModel") -> Iterator["LoaderInfo"]:
    """Evaluation loaders given a DistributedSampler: each rank sees its own shard."""
    data = model.data
    seen: set[int] = set()
    for sampler in data.samplers:
        for loader in sampler.loaders:
            if id(loader) not in seen and data.is_evaluation_loader(loader):
                seen.add(id(loader))
                yield loader


def unreduced_reports(model: "ModuleModel", loader: "LoaderInfo") -> Iterator[ShardReport]:
    """Counts summed in a loop over the loader (`correct += ...`) and reported after it in the
    same function (printed, logged), when that function reduces nothing across ranks."""
    facts = model.facts
    if facts.imports.imports_any(SYNCING_METRIC_PACKAGES):
        return
    for iteration in model.data.iterations(loader):
        loop = iteration.where
        if not isinstance(loop, LoopSite) or not isinstance(loop.node, cst.For):
            continue  # iterated by a call or a comprehension, not a loop statement of this file
        counts = _summed_in(loop.node.body)
        if not counts or _reduces_across_ranks(model, loop) or _handed_on(facts, loop, counts):
            continue
        derived = counts | _derived_from(facts, loop, counts)
        for site in _reports_after(facts, loop):
            used = _names_in(site.node.args) & derived
            if used and _labelled_with_rank(model, site):
                break  # `print(f"rank {rank}: {correct / total}")`: this rank's number, said so
            if used:
                yield ShardReport(loop, site, tuple(sorted(used & counts) or sorted(used)))
                break


def _summed_in(body: cst.CSTNode) -> set[str]:
    """Names that a loop body adds to (`correct += (pred == y).sum()`)."""
    return {
        node.target.value
        for node in walk(body)
        if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign) and isinstance(node.target, cst.Name)
    }


def _statements_after(loop: "LoopSite") -> list[cst.CSTNode]:
    return list(loop.context.statements_after())


def _derived_from(facts: "ModuleFacts", loop: "LoopSite", counts: set[str]) -> set[str]:
    """Names assigned, after the loop, from the counts (`accuracy = correct / total`)."""
    derived: set[str] = set()
    for statement in _statements_after(loop):
        for node in walk(statement):
            if isinstance(node, cst.Assign) and _names_in(node.value) & (counts | derived):
                for target in node.targets:
                    if isinstance(target.target, cst.Name):
                        derived.add(target.target.value)
    return derived


def _reports_after(facts: "ModuleFacts", loop: "LoopSite") -> list["CallSite"]:
    after = _statements_after(loop)
    return [site for site in facts.calls_in_statements(after) if site.name in REPORTING_CALLS]


def _labelled_with_rank(model: "ModuleModel", site: "CallSite") -> bool:
    """The report carries the rank beside the number: it says whose shard it is."""
    scope = site.context.scope
    return any(model.ranks.depends_on_rank(arg.value, scope) for arg in site.node.args)


def _reduces_across_ranks(model: "ModuleModel", loop: "LoopSite") -> bool:
    """The function holding the loop makes a collective or calls a known reducing helper,
    anywhere in it, itself or through the file's functions."""
    facts = model.facts
    scope = loop.context.scope
    reducing = facts.functions_reaching(lambda site: _reduces(model, site))
    for site in facts.calls:
        if site.context.scope is not scope:
            continue
        if _reduces(model, site) or any(function in reducing for function, _ in facts.functions_called_by(site)):
            return True
    return False


def _reduces(model: "ModuleModel", site: "CallSite") -> bool:
    return site.name in METRIC_REDUCERS or model.ranks.collective_name(site) is not None


def _handed_on(facts: "ModuleFacts", loop: "LoopSite", counts: set[str]) -> bool:
    """After the loop a count is handed to a call that may transform it (anything but a report
    or a call that keeps the number): what comes back may be reduced, the analysis cannot say."""
    for site in facts.calls_in_statements(_statements_after(loop)):
        if site.name in REPORTING_CALLS or site.name in VALUE_PRESERVING_CALLS:
            continue
        if _names_in(site.node.args) & counts:
            return True
    return False


def _names_in(node) -> set[str]:
    nodes = node if isinstance(node, (list, tuple)) else [node]
    return {inner.value for item in nodes for inner in walk(item) if isinstance(inner, cst.Name)}
