"""Loaders, samplers and datasets: which sampler reaches which loader, whether a loader is
trained on, where it is iterated, and whether something else shards it for you.

Every judgement a data rule needs is made here, once per file, so DDP001 and DDP002 agree on what
a "training loader" or an "epoch loop" is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Optional

import libcst as cst

from ddplint.analysis.facts import LoopSite
from ddplint.analysis.flow import Flow
from ddplint.analysis.torch_api import (
    ACCELERATE_PACKAGES,
    ACCELERATE_SINKS,
    ALWAYS_SINKS,
    DATALOADER,
    DISTRIBUTED_SAMPLER,
    FRAMEWORK_LOADER_HOOKS,
    ITERABLE_DATASETS,
    LIGHTNING_PACKAGES,
    LIGHTNING_SINKS,
    SELF_PARTITIONING_STREAMS,
    SUBSET_SAMPLERS,
    WHOLE_DATASET_SAMPLERS,
)
from ddplint.analysis.syntax import (
    argument,
    dotted_name,
    double_star_args,
    has_star_args,
    identifier_words,
    is_false,
    is_none,
    is_true,
    keyword_arg,
    last_name,
    receiver,
    string_value,
    walk,
)

if TYPE_CHECKING:
    from ddplint.analysis.facts import CallSite, ModuleFacts

# Calls inside an IterableDataset that mean it splits its stream (DDP009).
STREAM_SPLITTING_CALLS = {
    "get_worker_info", "get_rank", "get_world_size", "split_by_node", "split_by_worker", "split_dataset_by_node",
    "nodesplitter", "pytorch_worker_info", "get_local_rank", "shard",
}
_SPLITTING_WORDS = {"rank", "world", "replicas", "worker", "workers", "shard"}
# Functions that split a dataset or stream per rank (the file shards by hand or by library).
SHARDING_FUNCTIONS = {"split_dataset_by_node", "split_by_node", "nodesplitter", "shard", "split_by_rank", "sharding_filter"}


# Calls that only look at a batch: a loop making nothing else is a smoke test, not training.
_INSPECTION_CALLS = {
    "print", "len", "enumerate", "range", "zip", "isinstance", "type", "str", "repr", "format",
    "info", "debug", "warning", "log", "size", "numel", "dim", "keys", "items", "values",
    "item", "tolist", "min", "max", "mean", "std", "sum", "unique", "float", "int", "round", "abs",
}
EVAL_WORDS = {
    "val", "valid", "validation", "validate", "eval", "evaluation", "evaluate", "test", "testing", "dev",
    "holdout", "calib", "predict", "prediction", "inference",
}
_OPTIMIZER_LIKE = re.compile(r"optim|^opt$|scaler|engine")

# DDP004: what counts as loading or preprocessing data.
DATA_READERS = {
    "torch.load",
    "numpy.load",
    "numpy.loadtxt",
    "numpy.genfromtxt",
    "numpy.fromfile",
    "numpy.memmap",
    "json.load",
    "pickle.load",
    "datasets.load_dataset",
    "datasets.load_from_disk",
    "h5py.File",
}
DATA_READER_PREFIXES = ("pandas.read_", "torchvision.datasets.", "torchtext.datasets.", "torchaudio.datasets.")
_DATA_VERBS = {"load", "read", "build", "prepare", "make", "create", "get", "generate", "fetch", "process", "gen"}
_DATA_NOUNS = {
    "data", "dataset", "datasets", "corpus", "vocab", "split", "splits", "shard", "shards", "example",
    "examples", "sample", "samples", "feature", "features", "record", "records", "csv", "json", "jsonl",
    "parquet", "text", "texts", "image", "images", "tokens", "df", "dataframe", "frame", "files", "items",
    "metadata", "annotations", "labels", "manifest", "captions",
}
# Words in a loaded file's name that mean it holds model state (often saved from GPU tensors).
_STATE_WORDS = {"model", "state", "dict", "best", "last", "latest", "epoch", "step", "ckpt", "pth", "bin", "net"}
# ... and words that name a data file: `tokenized_train.pt`, `val_tensors.pt`, `cached_inputs`.
_DATA_FILE_WORDS = {
    "tokenized", "tensors", "train", "training", "val", "valid", "test", "cache", "cached", "inputs",
    "targets", "graph", "nids", "indices", "idx", "processed",
}
_PREPROCESS_WORDS = {"preprocess", "preprocessing", "tokenize", "tokenise", "featurize", "featurise", "encode_dataset"}
_NOT_DATA_WORDS = {
    "state", "checkpoint", "ckpt", "model", "weights", "config", "cfg", "optimizer", "scheduler", "pretrained",
    "resume", "snapshot",
    # Fetching files is the download-only step the other ranks are right to wait for.
    "download", "downloads",
}


@dataclass(eq=False)
class LoaderInfo:
    site: "CallSite" = field(repr=False)
    sampler: str  # "present" | "absent" | "whole-dataset" (a RandomSampler: no sharding)
    dataset: Optional[cst.BaseExpression] = field(repr=False)
    shuffle: Optional[bool] = None  # True / False literal, None when not passed or not a literal
    names: set[str] = field(default_factory=set)  # words of the names it is stored under
    # For a loader built by a function of another project module (`build_loader(ds)`): where
    # ("data.py:12"). `site` is then the call of that function in this file.
    built_in: Optional[str] = None


@dataclass(eq=False)
class SamplerInfo:
    site: "CallSite"
    shuffles: bool
    loaders: list[LoaderInfo]
    built_in: Optional[str] = None  # as for LoaderInfo: a sampler inside another module's factory


@dataclass(eq=False)
class Iteration:
    """A place where a loader is iterated, with the loop (if any) around it that repeats that."""

    loader: LoaderInfo
    where: "CallSite | LoopSite"
    epoch_loop: Optional["LoopSite"]


class DataModel:
    def __init__(self, facts: "ModuleFacts") -> None:
        self.facts = facts
        self.flow = Flow(facts)

    # -- classes defined in this file ---------------------------------------------------------
    @cached_property
    def loader_classes(self) -> set[str]:
        return self.facts.subclasses_of(DATALOADER)

    @cached_property
    def sampler_classes(self) -> set[str]:
        return self.facts.subclasses_of(DISTRIBUTED_SAMPLER)

    @cached_property
    def iterable_dataset_classes(self) -> set[str]:
        return self.facts.subclasses_of(ITERABLE_DATASETS)

    def constructs(self, node: Optional[cst.CSTNode], qualified: set[str], local: set[str]) -> bool:
        return isinstance(node, cst.Call) and self.facts.is_instance_of(node, qualified, local)

    # -- loaders ------------------------------------------------------------------------------
    @cached_property
    def loaders(self) -> list[LoaderInfo]:
        out = []
        for site in self.facts.calls:
            if self.constructs(site.node, DATALOADER, self.loader_classes):
                out.append(self._describe_loader(site))
        out.extend(self._project_loaders)
        return out

    @cached_property
    def _project_loaders(self) -> list[LoaderInfo]:
        """Calls of loader factories of the project's other modules (`build_loader(ds)` from
        `.data`), described from the factory's summary, with the dataset the caller passes."""
        project = self.facts.project
        if project is None:
            return []
        out = []
        for site in self.facts.calls:
            factory = project.loader_factory(self.facts, site)
            if factory is None:
                continue
            dataset = None
            if factory.dataset_parameter is not None:
                dataset = argument(site.node, factory.dataset_keyword, factory.dataset_parameter)
            words = {w for name in self.facts.assigned_to.get(id(site.node), ()) for w in identifier_words(name)}
            words.update(identifier_words(site.name or ""))
            out.append(
                LoaderInfo(site, factory.sampler, dataset, factory.shuffle, words, built_in=factory.where)
            )
        return out

    def _describe_loader(self, site: "CallSite") -> LoaderInfo:
        call = site.node
        shuffle_arg = argument(call, "shuffle", 2)
        shuffle = True if is_true(shuffle_arg) else False if is_false(shuffle_arg) else None
        return LoaderInfo(
            site=site,
            sampler=self._sampler_state(site),
            dataset=argument(call, "dataset", 0),
            shuffle=shuffle,
            names=self._stored_names(site),
        )

    def _sampler_state(self, site: "CallSite") -> str:
        call, scope = site.node, site.context.scope
        passed = [e for e in (argument(call, "sampler", 3), argument(call, "batch_sampler", 4)) if e is not None]
        if has_star_args(call):
            return "present"  # positional *args: cannot tell, so assume the author passed one
        for kwargs in double_star_args(call):
            keys = self._dict_keys(kwargs, scope)
            if keys is None or keys & {"sampler", "batch_sampler"}:
                return "present"
        state = "absent"
        for expr in passed:
            sources = self.flow.sources(expr, scope)
            if all(is_none(s.node) for s in sources):
                continue
            if all(self._samples_whole_dataset(s) for s in sources):
                state = "whole-dataset"
                continue
            return "present"
        return state

    def _samples_whole_dataset(self, source) -> bool:
        """RandomSampler / WeightedRandomSampler, or a SubsetRandomSampler whose indices do not
        depend on the rank (with rank-dependent indices it is the usual hand-made sharding)."""
        if self.constructs(source.node, WHOLE_DATASET_SAMPLERS, set()):
            return True
        if self.constructs(source.node, SUBSET_SAMPLERS, set()):
            return not self.facts.ranks.depends_on_rank(source.node, source.scope)
        return False

    def _dict_keys(self, expr: cst.BaseExpression, scope, depth: int = 0) -> Optional[set[str]]:
        """The literal keys a `**kwargs` dict may hold, or None if they cannot be known."""
        if depth > 3:
            return None
        keys: set[str] = set()
        for source in self.flow.sources(expr, scope):
            literal = _literal_dict_keys(source.node)
            if literal is None:
                return None
            keys |= literal
        name = dotted_name(expr)
        if name is not None:
            added = self._keys_added_later(name, scope, depth)
            if added is None:
                return None
            keys |= added
        return keys

    def _keys_added_later(self, name: str, scope, depth: int) -> Optional[set[str]]:
        """Keys put into dict `name` after it is built: `d["k"] = v`, `d.update(k=v)`,
        `d.update(other_dict)`."""
        keys = {b.item for holder in _scopes_up(scope) for b in holder.bindings.get(name, []) if b.kind == "item"}
        for site in self.facts.calls:
            owner = receiver(site.node.func)
            if site.name not in ("update", "setdefault") or owner is None or dotted_name(owner) != name:
                continue
            if site.name == "setdefault" and site.node.args:
                literal = string_value(site.node.args[0].value)
                if literal is None:
                    return None
                keys.add(literal)
            elif site.name == "update":
                for arg in site.node.args:
                    if arg.keyword is not None:
                        keys.add(arg.keyword.value)
                        continue
                    merged = self._dict_keys(arg.value, site.context.scope, depth + 1)
                    if merged is None:
                        return None
                    keys |= merged
            else:
                return None
        return keys

    def _stored_names(self, site: "CallSite") -> set[str]:
        """Words of the names a loader is assigned to or handed over as (`train_loader` ->
        {'train', 'loader'}), and of its dataset argument."""
        call = site.node
        words = {word for name in self.facts.assigned_to.get(id(call), ()) for word in identifier_words(name)}
        function = self.facts.function_of(site.context.scope)
        if function is not None and any(call is value for value, _ in function.returns):
            words.update(identifier_words(function.name))
        dataset = argument(call, "dataset", 0)
        if dataset is not None:
            name = dotted_name(dataset)
            if name:
                words.update(identifier_words(name.split(".")[-1]))
        return words

    # -- who shards for you -------------------------------------------------------------------
    def handed_to_framework(self, loader: LoaderInfo) -> bool:
        """Whether a framework re-wraps this loader with a sampler of its own."""
        for function in self.facts.functions:
            if function.name in FRAMEWORK_LOADER_HOOKS and function.class_name is not None:
                for value, _ in function.returns:
                    if self.flow.feeds(value, function.scope, loader.site.node):
                        return True
        for site in self._framework_sinks:
            for arg in site.node.args:
                if self.flow.feeds(arg.value, site.context.scope, loader.site.node, site.context.branches):
                    return True
        return self._dataset_given_to_deepspeed(loader)

    def _dataset_given_to_deepspeed(self, loader: LoaderInfo) -> bool:
        """`deepspeed.initialize(training_data=ds)` builds the sharded training loader itself; a
        loader of the script's own over the same dataset is a preview, not the training loader."""
        if loader.dataset is None:
            return False
        mine = {id(s.node) for s in self.flow.sources(loader.dataset, loader.site.context.scope) if s.node is not None}
        for site in self.facts.calls_named("deepspeed.initialize"):
            data = keyword_arg(site.node, "training_data")
            if data is None:
                continue
            theirs = {id(s.node) for s in self.flow.sources(data.value, site.context.scope) if s.node is not None}
            if mine & theirs:
                return True
        return False

    @cached_property
    def _framework_sinks(self) -> list["CallSite"]:
        imports = self.facts.imports
        uses_lightning = imports.imports_any(LIGHTNING_PACKAGES)
        uses_accelerate = imports.imports_any(ACCELERATE_PACKAGES)
        sinks = []
        for site in self.facts.calls:
            name = site.name
            owner = receiver(site.node.func)
            owner_words = set(identifier_words(dotted_name(owner) or "")) if owner is not None else set()
            if name in ALWAYS_SINKS:
                sinks.append(site)
            elif name in LIGHTNING_SINKS and owner is not None and uses_lightning:
                sinks.append(site)
            elif name in ACCELERATE_SINKS and (uses_accelerate or "accelerator" in owner_words):
                sinks.append(site)
        return sinks

    def is_iterable_dataset(self, loader: LoaderInfo) -> bool:
        if loader.dataset is None:
            return False
        for source in self.flow.sources(loader.dataset, loader.site.context.scope):
            node = _innermost_receiver(source.node)  # wds.WebDataset(urls).shuffle(...).decode(...)
            if self.constructs(node, ITERABLE_DATASETS, self.iterable_dataset_classes):
                return True
            if self._project_iterable_class(node) is not None:
                return True
            node = source.node
            if isinstance(node, cst.Call):
                streaming = keyword_arg(node, "streaming")
                if streaming is not None and not is_false(streaming.value):
                    return True  # datasets.load_dataset(..., streaming=True)
                if last_name(node.func) == "to_iterable_dataset":
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
                if not self.class_splits_stream(callee):
                    return callee
                continue
            splits = self._project_iterable_class(node)
            if splits is not None:
                if not splits:
                    return callee
                continue
            qualified = self.facts.qualified_names(node.func)
            if qualified & SELF_PARTITIONING_STREAMS:
                continue
            if qualified & ITERABLE_DATASETS or self._is_streaming_dataset(source.node):
                return last_name(node.func) or callee
        return None

    def _project_iterable_class(self, node: Optional[cst.CSTNode]) -> Optional[bool]:
        """For a call of an IterableDataset class of another project module: whether it splits
        its stream; None for anything else."""
        if self.facts.project is None or not isinstance(node, cst.Call):
            return None
        return self.facts.project.iterable_class(self.facts, node.func)

    def _is_streaming_dataset(self, node: Optional[cst.CSTNode]) -> bool:
        if not isinstance(node, cst.Call):
            return False
        streaming = keyword_arg(node, "streaming")
        return (streaming is not None and not is_false(streaming.value)) or last_name(node.func) == "to_iterable_dataset"

    def class_splits_stream(self, class_name: str) -> bool:
        ranks = self.facts.ranks
        for info in self.facts.class_lineage(class_name):
            for function in self.facts.functions:
                if function.class_name != info.name:
                    continue
                for site in self.facts.calls_by_function.get(id(function), []):
                    if site.name in STREAM_SPLITTING_CALLS or ranks.is_rank(site.node, site.context.scope):
                        return True
                for node in walk(function.node.body):
                    if isinstance(node, (cst.Name, cst.Attribute)):
                        words = set(identifier_words(last_name(node) or ""))
                        if words & _SPLITTING_WORDS:
                            return True
        return False

    def is_sharded_by_hand(self, loader: LoaderInfo) -> bool:
        """The dataset is already this rank's part (`Subset(ds, range(rank, n, world))`,
        `ds.shard(num_shards=world, index=rank)`, `split_dataset_by_node(...)`)."""
        if loader.dataset is None:
            return False
        ranks = self.facts.ranks
        scope = loader.site.context.scope
        for source in self.flow.sources(loader.dataset, scope):
            if source.node is None:
                continue
            if ranks.depends_on_rank(source.node, source.scope):
                return True
            for sub in walk(source.node):
                # split_dataset_by_node(...), .shard(...), nodesplitter=wds.split_by_node
                if isinstance(sub, (cst.Name, cst.Attribute)) and last_name(sub) in SHARDING_FUNCTIONS:
                    return True
        return False

    def dataset_comes_from_caller(self, loader: LoaderInfo) -> bool:
        """The dataset (or what it is built from) is a parameter filled in by code this file
        cannot follow: a method of a class the file never instantiates (library code, a
        `Trainer`), or a function handed to something else to call (`pool.submit(fn, ...)`,
        `launch(main, ...)`). That caller decides what the dataset holds and may have sharded it."""
        if loader.dataset is None:
            return False
        scope, arms = loader.site.context.scope, loader.site.context.branches
        for source in self.flow.sources(loader.dataset, scope, arms):
            if self._filled_in_elsewhere(source):
                return True
            if isinstance(source.node, cst.Call):
                for arg in source.node.args:
                    if isinstance(arg.value, cst.Name) and any(
                        self._filled_in_elsewhere(s) for s in self.flow.sources(arg.value, source.scope)
                    ):
                        return True
        return False

    def _filled_in_elsewhere(self, source) -> bool:
        function = source.parameter_of
        if function is None:
            return False
        return function.class_name is not None or function.name in self._functions_passed_as_values

    @cached_property
    def _functions_passed_as_values(self) -> set[str]:
        """Names of the file's functions handed to other calls (`pool.submit(fn, ...)`)."""
        return {
            arg.value.value
            for site in self.facts.calls
            for arg in site.node.args
            if isinstance(arg.value, cst.Name) and arg.value.value in self.facts.functions_by_name
        }

    # -- training vs evaluation -----------------------------------------------------------------
    def is_training_loader(self, loader: LoaderInfo) -> bool:
        """Trained on: iterated where the model steps; else, unless named for evaluation
        (`test_loader = DataLoader(..., shuffle=True)` only evaluated), shuffled or named for
        training."""
        iterations = self.iterations(loader)
        for iteration in iterations:
            if self._is_training_place(iteration.where):
                return True
        if iterations and all(self._only_inspects(iteration.where) for iteration in iterations):
            return False  # `for batch in loader: print(batch[0].shape); break`: a smoke test
        words = loader.names
        if words & EVAL_WORDS:
            return False
        return bool(loader.shuffle) or any(w.startswith("train") for w in words)

    def _only_inspects(self, where) -> bool:
        """A loop over the loader that only looks at batches (prints, logs, sizes)."""
        if not isinstance(where, LoopSite):
            return False
        calls = self._calls_in_loop.get(id(where.node), ())
        return bool(calls) and all(site.name in _INSPECTION_CALLS for site in calls)

    def is_evaluation_loader(self, loader: LoaderInfo) -> bool:
        """Not trained on, and named or used for evaluation (`val_loader`, iterated only inside
        `evaluate(...)`): its order and its coverage per rank do not change what is learned."""
        if self.is_training_loader(loader):
            return False
        if loader.names & EVAL_WORDS:
            return True
        places = [iteration.where.context.scope for iteration in self.iterations(loader)]
        return bool(places) and all(set(identifier_words(scope.name)) & EVAL_WORDS for scope in places)

    def _is_training_place(self, where) -> bool:
        if isinstance(where, LoopSite):
            return any(self._is_training_call(site) for site in self._calls_in_loop.get(id(where.node), ()))
        # passed to a callee: named for training (`train_one_epoch(loader)`)
        return any(word.startswith("train") or word == "fit" for word in identifier_words(where.name or ""))

    def _is_training_call(self, site: "CallSite") -> bool:
        if _steps_the_model(site):
            return True
        if any(word.startswith("train") for word in identifier_words(site.name or "")):
            return True
        return any(f in self._training_functions for f, _ in self.facts.functions_called_by(site))

    @cached_property
    def _calls_in_loop(self) -> dict[int, list["CallSite"]]:
        index: dict[int, list] = {}
        for site in self.facts.calls:
            for loop in site.context.loops:
                index.setdefault(id(loop.node), []).append(site)
        return index

    @cached_property
    def _training_functions(self) -> set:
        """The file's functions that call backward() / optimizer.step(), directly or not."""
        return self.facts.functions_reaching(_steps_the_model)

    def loop_trains(self, loop: LoopSite) -> bool:
        """The loop's body steps the model, directly or through functions of the file."""
        return any(self._is_training_call(site) for site in self._calls_in_loop.get(id(loop.node), ()))

    # -- evaluation passes (DDP010) -----------------------------------------------------------------
    def evaluation_pass(self, calls: list["CallSite"], loops: list[LoopSite]) -> Optional[str]:
        """Whether these calls and loops (one arm of an `if`, say) run a whole evaluation pass:
        a loop that runs the model under `no_grad()` / `inference_mode()` / after `.eval()`
        without stepping it, a call of a function of the file that does, or a call named for
        evaluation (`evaluate(model, val_loader)`, `engine.validate(...)`). Returns what to name
        in a message, or None."""
        ranks = self.facts.ranks
        # `if args.local_rank == -1: evaluate(...)` inside the guard: the single-GPU run only.
        calls = [site for site in calls if not ranks.runs_single_process(site.context)]
        loops = [loop for loop in loops if not ranks.runs_single_process(loop.context)]
        freezes = any(_freezes_the_model(site) for site in calls)
        for loop in loops:
            if freezes and self._calls_in_loop.get(id(loop.node)) and not self.loop_trains(loop):
                return "an evaluation loop"
        for site in calls:
            if any(f in self._evaluation_functions for f, _ in self.facts.functions_called_by(site)):
                return f"{site.name}(...)"
            if _names_evaluation(site) and not self.facts.functions_called_by(site):
                return f"{site.name}(...)"
        return None

    @cached_property
    def _evaluation_functions(self) -> set:
        """The file's functions that run an evaluation loop, directly or through each other."""
        direct = set()
        for function in self.facts.functions:
            if function in self._training_functions:
                continue
            calls = self.facts.calls_by_function.get(id(function), [])
            loops = [loop for loop in self.facts.loops if loop.context.scope is function.scope]
            if loops and any(_freezes_the_model(site) for site in calls):
                if any(self._calls_in_loop.get(id(loop.node)) for loop in loops):
                    direct.add(function)
        found = set(direct)
        changed = True
        while changed:
            changed = False
            for function in self.facts.functions:
                if function in found or function in self._training_functions:
                    continue
                for site in self.facts.calls_by_function.get(id(function), []):
                    if any(callee in found for callee, _ in self.facts.functions_called_by(site)):
                        found.add(function)
                        changed = True
                        break
        return found

    # -- iteration and epochs -------------------------------------------------------------------
    def iterations(self, loader: LoaderInfo) -> list[Iteration]:
        return self._iterations.get(id(loader), [])

    @cached_property
    def _iterations(self) -> dict[int, list[Iteration]]:
        out: dict[int, list[Iteration]] = {}
        for loader in self.loaders:
            found: list[Iteration] = []
            target = loader.site.node
            for loop in self.facts.loops:
                iterable = loop.iterable
                if iterable is None:
                    continue
                for via in self._feeding_paths(iterable, loop.context, target):
                    found.append(Iteration(loader, loop, self.repeating_loop(loop.context, via)))
            for site in self._iterator_calls:
                for via in self._feeding_paths(site.node.args[0].value, site.context, target):
                    found.append(Iteration(loader, site, self.repeating_loop(site.context, via)))
            for site in self._calls_out_to_trainers:
                # `Trainer(train_dataloader=a, eval_dataloader=b)`: only `a` is trained on there.
                handed = [arg for arg in site.node.args if not _keyword_names_evaluation(arg)]
                if any(self.flow.feeds(arg.value, site.context.scope, target) for arg in handed):
                    found.append(Iteration(loader, site, self.repeating_loop(site.context, ())))
            out[id(loader)] = found
        return out

    def repeating_loop(self, context, via=()) -> Optional[LoopSite]:
        """The innermost loop that repeats a place: around it in its own function, else around
        the call sites through which the loader arrived (`via`), else around the calls of the
        function it sits in (`for epoch in ...: self._run_epoch(epoch)`), a few levels up."""
        if context.loops:
            return context.loops[-1]
        for call_site in via:
            if call_site.context.loops:
                return call_site.context.loops[-1]
        for place in (context, *(site.context for site in via)):
            found = self._loop_around_callers(place.scope, 0)
            if found is not None:
                return found
        return None

    def _loop_around_callers(self, scope, depth: int) -> Optional[LoopSite]:
        function = self.facts.function_of(scope)
        if function is None or depth > 3:
            return None
        for site, _ in self.facts.call_sites_of(function):
            if site.context.loops:
                return site.context.loops[-1]
            found = self._loop_around_callers(site.context.scope, depth + 1)
            if found is not None:
                return found
        return None

    @cached_property
    def _iterator_calls(self) -> list["CallSite"]:
        return [site for site in self.facts.calls if site.name in ("iter", "cycle") and site.node.args]

    @cached_property
    def _calls_out_to_trainers(self) -> list["CallSite"]:
        """`engine.train_one_epoch(model, loader)`: calls out of this file that run an epoch."""
        out = []
        for site in self.facts.calls:
            words = identifier_words(site.name or "")
            if any(w.startswith("train") or w in ("fit", "epoch") for w in words):
                if not self.facts.functions_called_by(site):
                    out.append(site)
        return out

    def _feeding_paths(self, expr, context, target) -> list[tuple]:
        """The call-site chains (`via`) along which `target` reaches `expr`."""
        return [
            source.via
            for source in self.flow.sources(expr, context.scope, context.branches)
            if self.flow.source_feeds(source, target)
        ]

    # -- samplers -------------------------------------------------------------------------------
    @cached_property
    def samplers(self) -> list[SamplerInfo]:
        out = []
        for site in self.facts.calls:
            if self.constructs(site.node, DISTRIBUTED_SAMPLER, self.sampler_classes):
                shuffle = argument(site.node, "shuffle", 3)
                shuffles = not is_false(shuffle)
                out.append(SamplerInfo(site, shuffles, self._loaders_of(site)))
        for loader in self._project_loaders:
            # The factory's shuffling DistributedSampler: reached as `loader.sampler` or
            # unpacked from the factory's result (`loader, sampler = build(...)`).
            if self.facts.project.loader_factory(self.facts, loader.site).shuffling_sampler:
                out.append(SamplerInfo(loader.site, True, [loader], built_in=loader.built_in))
        return out

    def _loaders_of(self, sampler_site: "CallSite") -> list[LoaderInfo]:
        target = sampler_site.node
        out = []
        for loader in self.loaders:
            call, scope = loader.site.node, loader.site.context.scope
            sampler = argument(call, "sampler", 3)
            batch_sampler = argument(call, "batch_sampler", 4)
            for expr in (sampler, batch_sampler):
                if expr is not None and self.flow.feeds(expr, scope, target):
                    out.append(loader)
                    break
        return out

    def set_epoch_reaches(self, sampler: SamplerInfo, epoch_loop: Optional[LoopSite] = None) -> bool:
        """Whether some `set_epoch(...)` call may be made on this sampler each epoch (or
        unknowably might). With `epoch_loop`, a call made once next to that loop, outside any
        loop, does not count: it sets one epoch, not every epoch."""
        loaders = {id(loader.site.node) for loader in sampler.loaders}
        for site, owner, via_loader_attribute in self.set_epoch_calls:
            context = site.context
            if epoch_loop is not None and not context.loops and context.scope is epoch_loop.context.scope:
                continue
            if not via_loader_attribute and self._is_plain_loader(owner, context, loaders):
                continue
            for target in (sampler.site.node, *(loader.site.node for loader in sampler.loaders)):
                reach = self.flow.feeds(owner, context.scope, target, context.branches)
                if reach is None or reach:
                    return True
        # A per-epoch helper of another project module that sets the epoch on what it is given.
        for site, passed in self._project_set_epoch_calls:
            context = site.context
            if epoch_loop is not None and not context.loops and context.scope is epoch_loop.context.scope:
                continue
            for target in (sampler.site.node, *(loader.site.node for loader in sampler.loaders)):
                if self.flow.feeds(passed, context.scope, target, context.branches) is not False:
                    return True
        return False

    @cached_property
    def _project_set_epoch_calls(self) -> list[tuple["CallSite", cst.BaseExpression]]:
        project = self.facts.project
        if project is None:
            return []
        out = []
        for site in self.facts.calls:
            setter = project.epoch_setter(self.facts, site)
            if setter is not None:
                passed = argument(site.node, setter[0], setter[1])
                if passed is not None:
                    out.append((site, passed))
        return out

    @cached_property
    def set_epoch_calls(self) -> list[tuple["CallSite", cst.BaseExpression, bool]]:
        """(call, receiver, reached through `.sampler` / `.batch_sampler`) for every
        `x.set_epoch(e)` and `getattr(x, "set_epoch", ...)(e)`."""
        out = []
        for site in self.facts.calls:
            owner = self._set_epoch_receiver(site.node.func, site.context.scope)
            if owner is None:
                continue
            stripped = False
            while isinstance(owner, cst.Attribute) and owner.attr.value in ("sampler", "batch_sampler"):
                owner, stripped = owner.value, True
            out.append((site, owner, stripped))
        return out

    def _set_epoch_receiver(self, func: cst.BaseExpression, scope, follow: bool = True):
        """`x` for `x.set_epoch`, `getattr(x, "set_epoch", ...)`, or a name holding either
        (`set_epoch = getattr(loader.sampler, "set_epoch", None)`)."""
        if isinstance(func, cst.Attribute) and func.attr.value == "set_epoch":
            return func.value
        if (
            isinstance(func, cst.Call)
            and last_name(func.func) == "getattr"
            and len(func.args) >= 2
            and string_value(func.args[1].value) == "set_epoch"
        ):
            return func.args[0].value
        if follow and isinstance(func, cst.Name):
            for binding in scope.lookup(func.value):
                if binding.kind == "assign" and binding.value is not None:
                    owner = self._set_epoch_receiver(binding.value, binding.scope or scope, follow=False)
                    if owner is not None:
                        return owner
        return None

    def _is_plain_loader(self, owner, context, loaders: set[int]) -> bool:
        """The receiver is a torch DataLoader as built, which has no `set_epoch` (a call guarded
        by `hasattr(loader, "set_epoch")` never runs); Accelerate's prepared loaders do have one."""
        sources = self.flow.sources(owner, context.scope, context.branches)
        return bool(sources) and all(
            id(s.node) in loaders and self.constructs(s.node, DATALOADER, set()) for s in sources
        )

    # -- DDP004 -----------------------------------------------------------------------------------
    def is_data_work(self, site: "CallSite") -> bool:
        """Loading or preprocessing data (not checkpoints, models, configs or logs), directly or
        through a function of this file (`process(raw)` whose body tokenizes)."""
        if self._reads_or_preprocesses(site):
            return True
        return any(function in self._data_functions for function, _ in self.facts.functions_called_by(site))

    @cached_property
    def _data_functions(self) -> set:
        """The file's functions that load or preprocess data, directly or through each other."""
        return self.facts.functions_reaching(self._reads_or_preprocesses)

    def _reads_or_preprocesses(self, site: "CallSite") -> bool:
        call = site.node
        qualified = self.facts.qualified_names(call.func)
        words = set(identifier_words(site.name or ""))
        argument_words = self._first_argument_words(site)
        target_words = {w for key in self.facts.assigned_to.get(id(call), ()) for w in identifier_words(key)}
        if (words | argument_words | target_words) & _NOT_DATA_WORDS:
            return False
        if qualified & DATA_READERS or any(q.startswith(DATA_READER_PREFIXES) for q in qualified):
            return True
        if _names_preprocessing(site.name):
            return True
        if words & _DATA_VERBS and words & _DATA_NOUNS:
            return True
        if (dotted_name(call.func) or "") in self.dataset_classes:
            return True
        name = site.name or ""
        if name.endswith("Dataset") or name == "ImageFolder":
            return True
        # `ds.map(tokenize_sample)`: the work is in the function handed over
        return any(
            isinstance(arg.value, (cst.Name, cst.Attribute)) and _names_preprocessing(last_name(arg.value))
            for arg in call.args
        )

    def reads_a_data_file(self, site: "CallSite") -> bool:
        """`torch.load("cache/train_features.pt")`: the file is named as data (features, tokens,
        dataset) and nothing in its name says checkpoint / model / weights. Such files are
        written by preprocessing code and hold CPU tensors."""
        owner = site.context.scope.class_scope
        if owner is not None and self._is_dataset_class(owner.name):
            return True  # read inside a Dataset class: per-sample or per-shard data
        words = self._first_argument_words(site) | self._all_argument_words(site)
        if words & _NOT_DATA_WORDS or words & _STATE_WORDS:
            return False
        return bool(words & (_DATA_NOUNS | _DATA_FILE_WORDS))

    def _is_dataset_class(self, name: str) -> bool:
        """A torch Dataset of the file, or any class named, or derived from one named, like a
        dataset (`class OhsumedGraphs(torch_geometric.data.Dataset)`)."""
        if name in self.dataset_classes or name.endswith("Dataset"):
            return True
        info = self.facts.classes.get(name)
        return info is not None and any((last_name(base) or "").endswith("Dataset") for base in info.bases)

    def _all_argument_words(self, site: "CallSite") -> set[str]:
        """Words of every name and string in the first argument (`Path(self.processed_dir) /
        f"data_{i}.pt"` -> processed, dir, data, pt)."""
        if not site.node.args:
            return set()
        words: set[str] = set()
        for node in walk(site.node.args[0].value):
            if isinstance(node, cst.Name):
                words.update(identifier_words(node.value))
            elif isinstance(node, (cst.SimpleString, cst.FormattedStringText)):
                words.update(identifier_words(node.value.strip("'\"")))
        return words

    def _first_argument_words(self, site: "CallSite") -> set[str]:
        """Words naming what a call reads: `torch.load("pretrained.pt")` -> {pretrained, pt};
        `json.load(f)` with `f = open("run_config.json")` -> {run, config, json}."""
        if not site.node.args:
            return set()
        first = site.node.args[0].value
        words = set(identifier_words(dotted_name(first) or string_value(first) or ""))
        if isinstance(first, cst.Name):
            for source in self.flow.sources(first, site.context.scope, site.context.branches):
                if isinstance(source.node, cst.Call) and source.node.args:
                    inner = source.node.args[0].value
                    words.update(identifier_words(dotted_name(inner) or string_value(inner) or ""))
        return words

    @cached_property
    def dataset_classes(self) -> set[str]:
        return self.facts.subclasses_of({"torch.utils.data.Dataset", *ITERABLE_DATASETS})


def _keyword_names_evaluation(arg: cst.Arg) -> bool:
    return arg.keyword is not None and bool(set(identifier_words(arg.keyword.value)) & EVAL_WORDS)


def _steps_the_model(site: "CallSite") -> bool:
    """`loss.backward()`, `optimizer.step()`, `scaler.step(optimizer)`, `engine.step()`."""
    if site.name == "backward":
        return True
    if site.name == "step":
        owner = last_name(receiver(site.node.func) or cst.Name("_")) or ""
        return bool(_OPTIMIZER_LIKE.search(owner.lower()))
    return False


# Words of a function that runs an evaluation pass (`evaluate`, `run_validation`, `test_epoch`).
_EVALUATION_CALL_WORDS = {"evaluate", "evaluation", "validate", "validation", "val", "eval", "test", "testing"}
# `build_val_loader(...)`, `log_eval_metrics(...)`: about evaluation, but not a pass over data.
_NOT_AN_EVALUATION_PASS = {
    "loader", "dataloader", "dataset", "data", "sampler", "set", "split", "transform", "transforms", "path",
    "dir", "file", "metric", "metrics", "load", "get", "build", "make", "create", "log", "print", "save",
    "step", "batch", "score", "scores", "result", "results", "summary", "report",
}
_MODEL_OR_DATA_WORDS = {
    "model", "net", "network", "module", "encoder", "decoder", "generator", "classifier", "engine", "trainer",
    "loader", "dataloader", "dataset", "data", "ema", "student", "teacher", "policy", "backbone",
}
_NOT_EVALUATION_CALLS = {"eval", "train", "exists", "isfile", "isdir", "assert_close", "allclose"}


def _names_evaluation(site: "CallSite") -> bool:
    """`evaluate(model, loader)`, `engine.validate(...)`, `run_test(...)`: a call with arguments
    whose name is about evaluation. `model.eval()` only switches a mode."""
    name = site.name or ""
    if name in _NOT_EVALUATION_CALLS or not site.node.args:
        return False
    words = set(identifier_words(name))
    if not words & _EVALUATION_CALL_WORDS or words & _NOT_AN_EVALUATION_PASS:
        return False
    # A pass runs a model over data: `evaluate(model, val_loader)`, not the scoring of a results
    # file that every rank already produced (`coco_caption_eval(gt_root, result_file)`).
    passed = set()
    for arg in site.node.args:
        passed.update(identifier_words(dotted_name(arg.value) or last_name(arg.value) or ""))
    return bool(passed & _MODEL_OR_DATA_WORDS)


def _freezes_the_model(site: "CallSite") -> bool:
    """`torch.no_grad()`, `torch.inference_mode()`, `model.eval()`: evaluation, not training."""
    name = site.name
    if name in ("no_grad", "inference_mode"):
        return True
    return name == "eval" and isinstance(site.node.func, cst.Attribute) and not site.node.args


def _names_preprocessing(name: Optional[str]) -> bool:
    words = set(identifier_words(name or ""))
    return bool(words & _PREPROCESS_WORDS) or any(w.startswith(("preprocess", "tokeniz")) for w in words)


def _innermost_receiver(node: Optional[cst.CSTNode]) -> Optional[cst.CSTNode]:
    """For a method chain `A(...).b(...).c(...)`, the call `A(...)` it starts from."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Call):
        node = node.func.value
    return node


def _literal_dict_keys(node: Optional[cst.CSTNode]) -> Optional[set[str]]:
    """Keys of `{"a": 1}` or `dict(a=1)`; None for anything whose keys are not all literal."""
    if isinstance(node, cst.Dict):
        keys = set()
        for element in node.elements:
            literal = string_value(element.key) if isinstance(element, cst.DictElement) else None
            if literal is None:
                return None
            keys.add(literal)
        return keys
    if isinstance(node, cst.Call) and last_name(node.func) == "dict":
        if any(arg.keyword is None for arg in node.args):
            return None
        return {arg.keyword.value for arg in node.args}
    return None


def _scopes_up(scope):
    while scope is not None:
        yield scope
        scope = scope.parent
