"""ModuleModel: the one object rules and project questions read about a module.

It owns the module's records (`facts`, analysis/facts.py: what the one pass saw, and the generic
queries over it) and builds each derived model from them once, on first use, handing each the
other models it needs as constructor arguments:

    flow         Flow(facts)                                 where values come from
    ranks        RankModel(facts, flow)                      rank guards and collectives
    where        WhereModel(facts, flow, ranks)              where each place runs
    devices      DeviceModel(facts, flow, ranks, where)      device placement, process-group set-up
    data         DataModel(facts, flow, ranks, where)        loaders, samplers, epochs, training
    distributed  detect_distributed(facts)                   is the script distributed

Lazily, because a rule asks only the models it needs (the screen and the language server count on
a file with no rule asking for, say, devices never building them), and with each model's module
imported only then (importing this module imports none of them).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ddplint.analysis.data import DataModel
    from ddplint.analysis.devices import DeviceModel
    from ddplint.analysis.distributed import DistributedContext, RankModel
    from ddplint.analysis.facts import ModuleFacts
    from ddplint.analysis.flow import Flow
    from ddplint.analysis.where import WhereModel

__all__ = ["ModuleModel"]


class ModuleModel:
    def __init__(self, facts: "ModuleFacts") -> None:
        self.facts = facts

    @cached_property
    def flow(self) -> "Flow":
        """Where values come from (analysis/flow.py), shared by every model and rule."""
        from ddplint.analysis.flow import Flow

        return Flow(self.facts)

    @cached_property
    def ranks(self) -> "RankModel":
        from ddplint.analysis.distributed import RankModel

        return RankModel(self.facts, self.flow)

    @cached_property
    def where(self) -> "WhereModel":
        """Where each place runs: a rank, the launching process, the single-process path, never
        (analysis/where.py)."""
        from ddplint.analysis.where import WhereModel

        return WhereModel(self.facts, self.flow, self.ranks)

    @cached_property
    def devices(self) -> "DeviceModel":
        from ddplint.analysis.devices import DeviceModel

        return DeviceModel(self.facts, self.flow, self.ranks, self.where)

    @cached_property
    def data(self) -> "DataModel":
        from ddplint.analysis.data import DataModel

        return DataModel(self.facts, self.flow, self.ranks, self.where)

    @cached_property
    def distributed(self) -> "DistributedContext":
        from ddplint.analysis.distributed import detect_distributed

        return detect_distributed(self.facts)
