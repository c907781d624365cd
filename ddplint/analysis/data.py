"""The data model rules read as `model.data`: one object per file that puts together the
narrower models, each in its own module, so DDP001 and DDP002 agree on what a "training loader"
or an "epoch loop" is:

- `loaders.py`: which loaders exist, the kind of sampler each is given, who else shards them;
- `samplers.py`: DistributedSamplers, the loaders they reach, `set_epoch`;
- `epochs.py`: where each loader is iterated and which loop repeats that pass;
- `training.py`: training vs evaluation loaders, loops that step the model, evaluation passes;
- `streams.py`: IterableDatasets and whether their stream is split by rank (DDP009);
- `data_work.py`: what counts as loading or preparing data (DDP004, DDP008).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Optional

import libcst as cst

from ddplint.analysis.data_work import DataWork
from ddplint.analysis.epochs import Epochs, Iteration
from ddplint.analysis.loaders import LoaderInfo, Loaders, SamplerKind, constructs
from ddplint.analysis.samplers import EpochSetting, SamplerInfo, Samplers
from ddplint.analysis.streams import Streams
from ddplint.analysis.training import Training

if TYPE_CHECKING:
    from ddplint.analysis.distributed import RankModel
    from ddplint.analysis.facts import CallSite, LoopSite, ModuleFacts
    from ddplint.analysis.flow import Flow
    from ddplint.analysis.where import WhereModel

__all__ = ["DataModel", "Iteration", "LoaderInfo", "SamplerInfo", "SamplerKind"]


class DataModel:
    def __init__(self, facts: "ModuleFacts", flow: "Flow", ranks: "RankModel", where: Optional["WhereModel"] = None) -> None:
        self.facts = facts
        self.flow = flow  # one flow per file, shared with the other models
        self.ranks = ranks
        self.where = where  # where each place runs: a sampler only the single-process path builds shards nothing

    # -- the narrower models ---------------------------------------------------------------------
    @cached_property
    def loader_model(self) -> Loaders:
        return Loaders(self.facts, self.flow, self.ranks, self.where)

    @cached_property
    def sampler_model(self) -> Samplers:
        return Samplers(self.facts, self.flow, self.loader_model)

    @cached_property
    def epochs(self) -> Epochs:
        return Epochs(self.facts, self.flow, self.loader_model)

    @cached_property
    def training(self) -> Training:
        return Training(self.facts, self.flow, self.ranks, self.epochs, self.work)

    @cached_property
    def streams(self) -> Streams:
        return Streams(self.facts, self.flow, self.ranks)

    @cached_property
    def work(self) -> DataWork:
        return DataWork(self.facts, self.flow)

    def constructs(self, node: Optional[cst.CSTNode], qualified, local: set[str]) -> bool:
        return constructs(self.facts, node, qualified, local)

    # -- loaders -------------------------------------------------------------------------------
    @property
    def loaders(self) -> list[LoaderInfo]:
        return self.loader_model.all

    def unpacked_entries(self, kwargs: cst.BaseExpression, scope, key: str) -> Optional[list]:
        """The values a `**kwargs` dict may hold under `key`; None when it cannot be read."""
        return self.loader_model.entries_under(kwargs, scope, key)

    def handed_to_framework(self, loader: LoaderInfo, stream: bool = False) -> bool:
        return self.loader_model.handed_to_framework(loader, stream)

    def is_sharded_by_hand(self, loader: LoaderInfo) -> bool:
        return self.loader_model.is_sharded_by_hand(loader)

    def dataset_comes_from_caller(self, loader: LoaderInfo) -> bool:
        return self.loader_model.dataset_comes_from_caller(loader)

    def is_filled_as_it_runs(self, loader: LoaderInfo) -> bool:
        return self.loader_model.is_filled_as_it_runs(loader)

    def is_test_on_made_up_data(self, loader: LoaderInfo) -> bool:
        """A test that gives every rank the same made-up data on purpose: the dataset is a few
        numbers or random tensors, and the code around the loader asserts on results."""
        return (
            loader.dataset is not None
            and self.work.is_made_up(loader.dataset, loader.site.context.scope)
            and self.loader_model.checked_by_assertions(loader)
        )

    # -- samplers and epochs ---------------------------------------------------------------------
    @property
    def samplers(self) -> list[SamplerInfo]:
        return self.sampler_model.all

    @property
    def set_epoch_calls(self):
        return self.sampler_model.set_epoch_calls

    def unpassed_sampler_for(self, loader: LoaderInfo) -> Optional[SamplerInfo]:
        return self.sampler_model.unpassed_sampler_for(loader)

    def fixed_set_epoch(self, sampler: SamplerInfo, epoch_loop: "LoopSite") -> Optional[EpochSetting]:
        return self.sampler_model.fixed_set_epoch(sampler, epoch_loop)

    def ineffective_epoch_setting(self, sampler: SamplerInfo) -> Optional[EpochSetting]:
        return self.sampler_model.ineffective_epoch_setting(sampler)

    def set_epoch_reaches(self, sampler: SamplerInfo, epoch_loop: Optional["LoopSite"] = None) -> bool:
        return self.sampler_model.set_epoch_reaches(sampler, epoch_loop)

    def returned_never_seeded(self, sampler: SamplerInfo, loader: LoaderInfo) -> bool:
        return self.sampler_model.returned_never_seeded(sampler, loader)

    def iterations(self, loader: LoaderInfo) -> list[Iteration]:
        return self.epochs.iterations(loader)

    def replays_first_pass(self, iteration: Iteration) -> bool:
        return self.epochs.replays_first_pass(iteration)

    def repeating_loop(self, context, via=()) -> Optional["LoopSite"]:
        return self.epochs.repeating_loop(context, via)

    def runs_once(self, loop: "LoopSite") -> bool:
        return self.epochs.runs_once(loop)

    # -- training vs evaluation ------------------------------------------------------------------
    def is_training_loader(self, loader: LoaderInfo) -> bool:
        return self.training.is_training_loader(loader)

    def is_evaluation_loader(self, loader: LoaderInfo) -> bool:
        return self.training.is_evaluation_loader(loader)

    def loop_trains(self, loop: "LoopSite") -> bool:
        return self.training.loop_trains(loop)

    def evaluation_pass(self, calls: list["CallSite"], loops: list["LoopSite"]) -> Optional[str]:
        return self.training.evaluation_pass(calls, loops)

    def rank_zero_only_evaluation_steps(self) -> list:
        return self.training.rank_zero_only_evaluation_steps()

    # -- streams ---------------------------------------------------------------------------------
    @property
    def iterable_dataset_classes(self) -> set[str]:
        return self.streams.iterable_dataset_classes

    def is_iterable_dataset(self, loader: LoaderInfo) -> bool:
        return self.streams.is_iterable_dataset(loader)

    def unsplit_stream(self, loader: LoaderInfo) -> Optional[str]:
        return self.streams.unsplit_stream(loader)

    def class_splits_stream(self, class_name: str) -> bool:
        return self.streams.class_splits_stream(class_name)

    # -- data work -------------------------------------------------------------------------------
    def is_data_work(self, site: "CallSite") -> bool:
        return self.work.is_data_work(site)

    def reads_a_data_file(self, site: "CallSite") -> bool:
        return self.work.reads_a_data_file(site)
