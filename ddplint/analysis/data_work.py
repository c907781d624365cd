"""What counts as data work (DDP004) and as a data file (DDP008): loading, tokenising or
otherwise preparing a dataset, as opposed to checkpoints, configs and logs.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Optional

import libcst as cst

from ddplint.analysis.syntax import dotted_name, identifier_words, last_name, string_value, walk
from ddplint.analysis.torch_api import ITERABLE_DATASETS

if TYPE_CHECKING:
    from ddplint.analysis.facts import CallSite, ModuleFacts
    from ddplint.analysis.flow import Flow

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


class DataWork:
    def __init__(self, facts: "ModuleFacts", flow: "Flow") -> None:
        self.facts = facts
        self.flow = flow

    @cached_property
    def dataset_classes(self) -> set[str]:
        return self.facts.subclasses_of({"torch.utils.data.Dataset", *ITERABLE_DATASETS})

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


def _names_preprocessing(name: Optional[str]) -> bool:
    words = set(identifier_words(name or ""))
    return bool(words & _PREPROCESS_WORDS) or any(w.startswith(("preprocess", "tokeniz")) for w in words)
