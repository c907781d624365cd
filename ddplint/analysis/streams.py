"""IterableDatasets (DDP009): which loaders iterate a stream, and whether something splits that
stream by rank or worker. A DistributedSampler cannot shard a stream, so the stream must do it.
"""

from __future__ import annotations

from functools import cached_property
from typing import Optional

import libcst as cst

from ddplint.analysis.loaders import LoaderInfo, constructs
from ddplint.analysis.syntax import (
    dotted_name,
    identifier_words,
    is_false,
    keyword_arg,
    last_name,
    receiver,
    string_value,
    walk,
)
from ddplint.analysis.torch_api import (
    ITERABLE_DATASETS,
    LIGHTNING_TRAINER,
    SELF_PARTITIONING_STREAMS,
    STREAM_SPLITTING_CALLS,
)

# Words of names that tell a stream's methods which part of the job they run in. The worker
# (`get_worker_info()`, `worker_id`) is not among them: splitting among the DataLoader workers of
# one process leaves every rank's workers reading the same items.
_SPLITTING_WORDS = {"rank", "world", "replicas", "shard"}
# Calls that split a stream among the workers of one process only.
_WORKER_ONLY_CALLS = frozenset({"get_worker_info", "split_by_worker"})


# Lightning's entry points that start one process per device when given such a strategy, the
# strategy classes that do (by class name, from any Lightning package) and the prefixes of the
# strategy strings that do ("ddp", "ddp_spawn", "fsdp", "deepspeed_stage_2", ...).
_LIGHTNING_LAUNCHERS = LIGHTNING_TRAINER | {
    "lightning.fabric.Fabric", "lightning.Fabric", "lightning_fabric.Fabric", "pytorch_lightning.Trainer",
}
_MULTI_PROCESS_STRATEGIES = frozenset({"DDPStrategy", "FSDPStrategy", "DeepSpeedStrategy", "ModelParallelStrategy"})
_MULTI_PROCESS_STRATEGY_PREFIXES = ("ddp", "fsdp", "deepspeed")


class Streams:
    def __init__(self, facts, flow, ranks) -> None:
        self.facts = facts
        self.flow = flow
        self.ranks = ranks

    @cached_property
    def launches_lightning_ranks(self) -> bool:
        """The file starts Lightning Fabric or a Trainer with a strategy that runs one process
        per device (`L.Fabric(strategy=FSDPStrategy(...))`, `Trainer(strategy="ddp")`): its
        code runs on every rank though it never calls torch.distributed itself."""
        for site in self.facts.calls:
            if _LIGHTNING_LAUNCHERS.isdisjoint(self.facts.qualified_names(site.node.func)):
                continue
            strategy = keyword_arg(site.node, "strategy")
            if strategy is None:
                continue
            for source in self.flow.sources(strategy.value, site.context.scope, site.context.branches):
                if _multi_process_strategy(source.node):
                    return True
        return False

    @cached_property
    def iterable_dataset_classes(self) -> set[str]:
        return self.facts.subclasses_of(ITERABLE_DATASETS)

    def is_iterable_dataset(self, loader: LoaderInfo) -> bool:
        if loader.dataset is None:
            return False
        for source in self.flow.sources(loader.dataset, loader.site.context.scope):
            node = _innermost_receiver(source.node)  # wds.WebDataset(urls).shuffle(...).decode(...)
            if constructs(self.facts, node, ITERABLE_DATASETS, self.iterable_dataset_classes):
                return True
            if self._project_iterable_class(node) is not None:
                return True
            if _is_streaming_dataset(source.node):
                return True  # datasets.load_dataset(..., streaming=True), ds.to_iterable_dataset()
        return self._tested_iterable(loader)

    def _tested_iterable(self, loader: LoaderInfo) -> bool:
        """The loader is built where an `isinstance(dataset, IterableDataset)` test on its dataset
        holds: `if isinstance(ds, torch.utils.data.IterableDataset): DataLoader(ds, ...)`, a
        loader factory's branch for streams, where a sampler could not be given."""
        dataset = loader.dataset
        if not isinstance(dataset, cst.Name):
            return False
        for branch, in_body in loader.site.context.branches:
            test = branch.test
            if not in_body or not isinstance(test, cst.Call) or dotted_name(test.func) != "isinstance" or len(test.args) != 2:
                continue
            tested, kinds = test.args[0].value, test.args[1].value
            classes = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
            if isinstance(tested, cst.Name) and tested.value == dataset.value and any(
                dotted_name(kind) in self.iterable_dataset_classes or not ITERABLE_DATASETS.isdisjoint(self.facts.qualified_names(kind))
                for kind in classes
            ):
                return True
        return False

    def unsplit_stream(self, loader: LoaderInfo) -> Optional[str]:
        """For a loader over an IterableDataset: the name of a stream that nothing splits by
        rank or worker (DDP009), or None. A class of this file splits its stream when any of its
        methods (or its bases' in this file) asks for the rank, the world size or the worker
        (`get_worker_info()`, `dist.get_rank()`, `os.environ["RANK"]`, `self.rank`,
        `split_by_node`, `islice(it, rank, None, world)`); library streams (a streaming HF
        dataset, a WebDataset) are split when the file shards them (`split_dataset_by_node`,
        `nodesplitter=wds.split_by_node`, `.shard(...)`). Self-partitioning streams (MosaicML
        `StreamingDataset`, litdata) never count."""
        if loader.dataset is None:
            return None
        for source in self.flow.sources(loader.dataset, loader.site.context.scope):
            node = _innermost_receiver(source.node)
            if not isinstance(node, cst.Call):
                continue
            callee = dotted_name(node.func) or ""
            if callee in self.iterable_dataset_classes:
                if not self.class_splits_stream(callee) and not self._built_over_a_split_stream(node, source.scope):
                    return callee
                continue
            splits = self._project_iterable_class(node)
            if splits is not None:
                if not splits and not self._built_over_a_split_stream(node, source.scope):
                    return callee
                continue
            qualified = self.facts.qualified_names(node.func)
            if qualified & SELF_PARTITIONING_STREAMS:
                continue
            if qualified & ITERABLE_DATASETS or _is_streaming_dataset(source.node):
                return last_name(node.func) or callee
        return None

    def _built_over_a_split_stream(self, call: cst.Call, scope) -> bool:
        """The stream class is handed a stream that is split by rank (`Batched(ShardedLines(...))`,
        a wrapper that groups, buffers or shuffles what it iterates): what it yields comes from
        this rank's share."""
        for arg in call.args:
            for source in self._stream_sources(arg.value, scope):
                inner = _innermost_receiver(source.node)
                if not isinstance(inner, cst.Call):
                    continue
                name = dotted_name(inner.func) or ""
                if name in self.iterable_dataset_classes and self.class_splits_stream(name):
                    return True
                if self._project_iterable_class(inner):
                    return True
        return False

    def _stream_sources(self, value: cst.BaseExpression, scope) -> list:
        """Where an argument's streams come from: its sources, and for a list of streams (a
        mixture over several corpora) its literal elements and what `append` / `insert` put in
        it in the same scope (`parts = []`, `parts.append(Packed(...))`, `Mixed(parts)`)."""
        found = []
        for source in self.flow.sources(value, scope):
            found.append(source)
            if isinstance(source.node, (cst.List, cst.Tuple)):
                for element in source.node.elements:
                    found += self.flow.sources(element.value, source.scope)
        name = dotted_name(value)
        if name is None:
            return found
        for site in self.facts.calls:
            if site.name not in ("append", "insert") or not site.node.args or site.context.scope is not scope:
                continue
            owner = receiver(site.node.func)
            if owner is not None and dotted_name(owner) == name:
                found += self.flow.sources(site.node.args[-1].value, site.context.scope, site.context.branches)
        return found

    def _project_iterable_class(self, node: Optional[cst.CSTNode]) -> Optional[bool]:
        """For a call of an IterableDataset class of another project module: whether it splits
        its stream; None for anything else."""
        if self.facts.project is None or not isinstance(node, cst.Call):
            return None
        return self.facts.project.iterable_class(self.facts, node.func)

    def class_splits_stream(self, class_name: str) -> bool:
        ranks = self.ranks
        for info in self.facts.class_lineage(class_name):
            for function in self.facts.functions:
                if function.class_name != info.name:
                    continue
                for site in self.facts.calls_by_function.get(id(function), []):
                    if site.name in _WORKER_ONLY_CALLS:
                        continue
                    if site.name in STREAM_SPLITTING_CALLS or ranks.is_rank(site.node, site.context.scope):
                        return True
                for node in walk(function.node.body):
                    if isinstance(node, (cst.Name, cst.Attribute)):
                        words = set(identifier_words(last_name(node) or ""))
                        if words & _SPLITTING_WORDS:
                            return True
        return False


def _multi_process_strategy(node: Optional[cst.CSTNode]) -> bool:
    if isinstance(node, cst.Call):
        return last_name(node.func) in _MULTI_PROCESS_STRATEGIES
    text = string_value(node)
    return text is not None and text.startswith(_MULTI_PROCESS_STRATEGY_PREFIXES)


def _is_streaming_dataset(node: Optional[cst.CSTNode]) -> bool:
    if not isinstance(node, cst.Call):
        return False
    streaming = keyword_arg(node, "streaming")
    return (streaming is not None and not is_false(streaming.value)) or last_name(node.func) == "to_iterable_dataset"


def _innermost_receiver(node: Optional[cst.CSTNode]) -> Optional[cst.CSTNode]:
    """For a method chain `A(...).b(...).c(...)`, the call `A(...)` it starts from."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Call):
        node = node.func.value
    return node
