"""What counts as data work (DDP004) and as a data file (DDP008): loading, tokenising or
otherwise preparing a dataset, as opposed to checkpoints, configs and logs.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Optional

import libcst as cst

from ddplint.analysis.syntax import (
    dotted_name,
    identifier_words,
    is_false,
    is_none,
    is_true,
    last_name,
    receiver,
    string_value,
    walk,
)
from ddplint.analysis.torch_api import (
    DATA_READERS,
    DATASET_LOADERS,
    DATASET_MAP_OPTIONS,
    DATASET_PACKAGES,
    DATASET_TRANSFORMS,
    ITERABLE_DATASETS,
    SIZED_TENSOR_FACTORIES,
    TABLE_READER_PREFIXES,
    TENSOR_FILLS,
    VALUE_TENSOR_FACTORIES,
)

if TYPE_CHECKING:
    from ddplint.analysis.records import CallSite, LoopSite

# Keywords that shape a dataset without providing its content.
_LAYOUT_KEYWORDS = {"dtype", "device", "transform", "target_transform", "seed", "generator", "requires_grad"}
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


class WorkKind(enum.Enum):
    """What a piece of data work does; the value is how a message says it."""

    BUILDS_DATASET = "builds the dataset"
    LOADS_DATASET = "loads the dataset"
    READS_TABLE = "reads a data table"
    TOKENISES = "tokenises the data"
    PREPROCESSES = "preprocesses the data"
    MAPS = "maps a function over the dataset"
    FILTERS = "filters the dataset"
    ITERATES_LOADER = "iterates the loader"
    ITERATES_DATASET = "iterates the dataset"
    PREPARES = "prepares the data"  # a function of the file that does one of the above
    READS_FILE = "reads a data file"
    NAMED_DATA = "loads or builds the data"  # a data-named function of another module
    LOADS_DATA = "loads data"  # a function of the file that reads a file


@dataclass(frozen=True, eq=False)
class Work:
    """Data work found in a call or a loop, described for a message."""

    kind: WorkKind
    code: str  # the call or loop as written, shortened: "dataset.map(tokenize)"
    node: cst.CSTNode
    # The work itself scales with the dataset (building, tokenising, mapping a dataset,
    # iterating a loader). False for reads of a file whose content the tool cannot judge
    # (`torch.load(path)`, `load_data(...)` of another module): they count as data work only
    # where their result is what the other ranks wait to receive.
    scales: bool

    @property
    def what(self) -> str:
        return self.kind.value


class DataWork:
    def __init__(self, facts, flow) -> None:
        self.facts = facts
        self.flow = flow
        self._direct_memo: dict[int, Optional[Work]] = {}

    @cached_property
    def dataset_classes(self) -> set[str]:
        return self.facts.subclasses_of({"torch.utils.data.Dataset", *ITERABLE_DATASETS})

    def is_data_work(self, site: "CallSite") -> bool:
        """Loading or preprocessing data (not checkpoints, models, configs or logs), directly or
        through a function of this file (`process(raw)` whose body tokenizes)."""
        return self.work_of(site) is not None

    def work_of(self, site: "CallSite") -> Optional[Work]:
        """The data work a call does, directly or through the file's functions it calls (what
        a function of the file does counts for more than its name)."""
        direct = self._direct_work(site)
        if _scales(direct):
            return direct
        if self._names_other_things(site):
            return None  # `verify_checkpoint(ckpt_dir)`, `load_model_config(path)`
        called = [function for function, _ in self.facts.functions_called_by(site)]
        if any(function in self._scaling_functions for function in called):
            return Work(WorkKind.PREPARES, _short(self.facts, site.node), site.node, scales=True)
        if direct is not None:
            return direct
        if any(function in self._reading_functions for function in called):
            return Work(WorkKind.LOADS_DATA, _short(self.facts, site.node), site.node, scales=False)
        return None

    def loop_work(self, loop: "LoopSite", loaders: list) -> Optional[Work]:
        """A `for` loop over one of these loaders, or over a dataset the file builds: a pass over
        the data (unless the dataset is a handful of made-up tensors)."""
        iterable = loop.iterable
        if iterable is None:
            return None
        scope, arms = loop.context.scope, loop.context.branches
        code = f"for ... in {_short(self.facts, iterable, 30)}"
        for loader in loaders:
            if loader.dataset is not None and self._synthetic(loader.dataset, loader.site.context.scope):
                continue
            if self.flow.feeds(iterable, scope, loader.site.node, arms):
                return Work(WorkKind.ITERATES_LOADER, code, loop.node, scales=True)
        for source in self.flow.sources(iterable, scope, arms):
            node = source.node
            if isinstance(node, cst.Call):
                site = self.flow.call_site(node)
                work = self._direct_work(site) if site is not None else None
                if work is not None and work.scales and work.kind in (WorkKind.BUILDS_DATASET, WorkKind.LOADS_DATASET):
                    return Work(WorkKind.ITERATES_DATASET, code, loop.node, scales=True)
        return None

    @cached_property
    def _scaling_functions(self):
        """The file's functions that build, load, map or tokenise a dataset, directly or not
        (asked about the callees of some calls: judged from theirs down)."""
        return self.facts.reaching_test(lambda site: _scales(self._direct_work(site)))

    @cached_property
    def _reading_functions(self):
        """The file's functions that read a data file, directly or through each other."""
        return self.facts.reaching_test(lambda site: self._direct_work(site) is not None)

    def _direct_work(self, site: "CallSite") -> Optional[Work]:
        """What the call itself does (memoised: every call of the file is asked, twice)."""
        key = id(site.node)
        if key not in self._direct_memo:
            self._direct_memo[key] = self._judge_call(site)
        return self._direct_memo[key]

    def _names_other_things(self, site: "CallSite") -> bool:
        """The call, what it reads or what it is stored under names a checkpoint, a model, a
        config or a download (`load_state(ckpt_path)`, `weights = fetch(...)`)."""
        words = set(identifier_words(site.name or ""))
        argument_words = self._first_argument_words(site)
        target_words = {w for key in self.facts.assigned_to.get(id(site.node), ()) for w in identifier_words(key)}
        return bool((words | argument_words | target_words) & _NOT_DATA_WORDS)

    def _judge_call(self, site: "CallSite") -> Optional[Work]:
        # Every call of the file is judged, and most are no data work: the words of what it
        # reads or is stored under, and the code for a message, are looked at only for a call
        # that would otherwise count.
        judged = self._judge_unnamed(site)
        if judged is None or self._names_other_things(site):
            return None
        kind, scales = judged
        return Work(kind, _short(self.facts, site.node), site.node, scales=scales)

    def _judge_unnamed(self, site: "CallSite") -> Optional[tuple[WorkKind, bool]]:
        call = site.node
        qualified = self.facts.qualified_names(call.func)
        words = set(identifier_words(site.name or ""))
        scope = site.context.scope
        if qualified & DATASET_LOADERS:
            return WorkKind.LOADS_DATASET, True
        if any(q.startswith(TABLE_READER_PREFIXES) for q in qualified):
            return WorkKind.READS_TABLE, True
        if self._builds_dataset(site, qualified):
            if self._synthetic_call(call, scope):
                return None  # a few made-up samples: a test fixture, not a dataset
            return WorkKind.BUILDS_DATASET, True
        if _names_preprocessing(site.name):
            if _only_literal_text(call):
                return None  # `tokenizer("Hello")`: one sample (a prompt for a log), not a dataset
            return (WorkKind.TOKENISES if _names_tokenising(site.name) else WorkKind.PREPROCESSES), True
        if site.name in DATASET_TRANSFORMS and self._names_other_things(site):
            return None  # judged before looking through the receiver, which judges other calls
        transform = self._dataset_transform(site)
        if transform is not None:
            return transform, True
        if qualified & DATA_READERS:
            return WorkKind.READS_FILE, False
        if words & _DATA_VERBS and words & _DATA_NOUNS:
            return WorkKind.NAMED_DATA, False
        handed = [last_name(arg.value) for arg in call.args if isinstance(arg.value, (cst.Name, cst.Attribute))]
        if any(_names_preprocessing(name) for name in handed):
            # `convert_examples_to_features(examples, tokenizer)`: given a tokenizer, but what it
            # makes of it (a dataset or one prompt) is not known here
            tokenises = any(_names_tokenising(name) for name in handed)
            return (WorkKind.TOKENISES if tokenises else WorkKind.PREPROCESSES), False
        return None

    def _builds_dataset(self, site: "CallSite", qualified: set[str]) -> bool:
        name = site.name or ""
        if any(q.startswith(DATASET_PACKAGES) for q in qualified):
            return True
        if (dotted_name(site.node.func) or "") in self.dataset_classes:
            return True
        return name.endswith("Dataset") or name == "ImageFolder"

    def _dataset_transform(self, site: "CallSite") -> Optional[WorkKind]:
        """`ds.map(tokenize_fn)`, `raw.filter(keep, num_proc=8)`: a function applied to every
        sample of a dataset. The receiver is a dataset the file loads or builds, the function
        handed over names preprocessing, or the call takes the batching options only dataset
        maps take (`batched=`, `num_proc=`)."""
        call = site.node
        if site.name not in DATASET_TRANSFORMS or not isinstance(call.func, cst.Attribute) or not call.args:
            return None
        what = WorkKind.FILTERS if site.name == "filter" else WorkKind.MAPS
        if any(arg.keyword is not None and arg.keyword.value in DATASET_MAP_OPTIONS for arg in call.args):
            return what
        if any(
            isinstance(arg.value, (cst.Name, cst.Attribute)) and _names_preprocessing(last_name(arg.value))
            for arg in call.args
        ):
            return what
        for source in self.flow.sources(call.func.value, site.context.scope, site.context.branches):
            if isinstance(source.node, cst.Call):
                inner = self.flow.call_site(source.node)
                if inner is not None and inner is not site and _scales(self._direct_work(inner)):
                    return what
        return None

    def is_made_up(self, expr: cst.BaseExpression, scope) -> bool:
        """A dataset of a few numbers or random tensors (`TensorDataset(torch.randn(8, 3))`)."""
        return self._synthetic(expr, scope)

    def _synthetic_call(self, call: cst.Call, scope) -> bool:
        """`TensorDataset(torch.randn(64, 3))`, `RandomDataset(size=32)`: every argument is a
        number or a made-up tensor."""
        values = [arg.value for arg in call.args if arg.keyword is None or arg.keyword.value not in _LAYOUT_KEYWORDS]
        return bool(values) and all(self._synthetic(value, scope) for value in values)

    def _synthetic(self, expr: cst.BaseExpression, scope, depth: int = 0) -> bool:
        if depth > 4:
            return False
        if isinstance(expr, (cst.Integer, cst.Float)) or is_none(expr) or is_true(expr) or is_false(expr):
            return True
        if isinstance(expr, (cst.Tuple, cst.List)):
            return all(self._synthetic(element.value, scope, depth + 1) for element in expr.elements)
        if isinstance(expr, cst.BinaryOperation):
            return self._synthetic(expr.left, scope, depth + 1) and self._synthetic(expr.right, scope, depth + 1)
        if isinstance(expr, cst.Call):
            if last_name(expr.func) in SIZED_TENSOR_FACTORIES:
                return True
            if last_name(expr.func) in TENSOR_FILLS and (filled := receiver(expr.func)) is not None:
                return self._synthetic(filled, scope, depth + 1)
            if last_name(expr.func) in VALUE_TENSOR_FACTORIES:
                return all(
                    self._synthetic(arg.value, scope, depth + 1) for arg in expr.args if arg.keyword is None
                )
            site = self.flow.call_site(expr)
            if site is not None and self._builds_dataset(site, self.facts.qualified_names(expr.func)):
                return self._synthetic_call(expr, scope)
            return False
        if isinstance(expr, cst.Name):
            sources = self.flow.sources(expr, scope)
            return bool(sources) and all(
                s.node is not None and s.node is not expr and self._synthetic(s.node, s.scope, depth + 1)
                for s in sources
            )
        return False

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


def _scales(work: Optional[Work]) -> bool:
    return work is not None and work.scales


# The tokenizer as a noun: `tokenizer(texts)` tokenises, `get_tokenizer()` only fetches the tool.
_TOKENIZER_NOUNS = {"tokenizer", "tokeniser", "tokenizers", "tokenisers"}
_TOOL_VERBS = {
    "get", "load", "save", "build", "make", "create", "init", "train", "from", "set", "update", "add",
    "resize", "assets", "config", "path", "name", "type", "cls", "class",
}


@lru_cache(maxsize=4096)  # every call of the file is asked, by name
def _names_tokenising(name: Optional[str]) -> bool:
    """`tokenize(...)`, `tokenization_fn`, or a call of the tokenizer itself (`tokenizer(...)`,
    `self.text_tokenizer(...)`); not `get_tokenizer()` or `save_tokenizer_assets(...)`."""
    words = identifier_words(name or "")
    if any(w.startswith(("tokeniz", "tokenis")) and w not in _TOKENIZER_NOUNS for w in words):
        return True
    return bool(words) and words[-1] in _TOKENIZER_NOUNS and not set(words) & _TOOL_VERBS


def _only_literal_text(call: cst.Call) -> bool:
    """Every positional argument is a literal piece of prose (`tokenizer("Hello, my dog")`):
    one sample, not a dataset. A literal without spaces is more likely a path
    (`tokenize("train.jsonl")`)."""
    values = [arg.value for arg in call.args if arg.keyword is None]
    if not values:
        return False
    for value in values:
        text: Optional[str]
        if isinstance(value, cst.FormattedString):
            text = "".join(part.value for part in value.parts if isinstance(part, cst.FormattedStringText))
        else:
            text = string_value(value)
        if text is None or " " not in text.strip():
            return False
    return True


def _short(facts, node: cst.CSTNode, limit: int = 60) -> str:
    """The code of a node on one line, or its callee with `(...)` when that is too long."""
    code = " ".join(facts.module.code_for_node(node).split())
    if len(code) <= limit:
        return code
    if isinstance(node, cst.Call):
        return f"{dotted_name(node.func) or last_name(node.func) or 'call'}(...)"
    return code[: limit - 3] + "..."


@lru_cache(maxsize=4096)
def _names_preprocessing(name: Optional[str]) -> bool:
    words = set(identifier_words(name or ""))
    if words & (_PREPROCESS_WORDS - {"tokenize", "tokenise"}) or any(w.startswith("preprocess") for w in words):
        return True
    return _names_tokenising(name)
