"""Training vs evaluation: whether a loader is trained on, whether a loop steps the model, and
whether a block of code runs a whole evaluation pass (DDP010).
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING, Optional

import libcst as cst

from ddplint.analysis.epochs import EVAL_WORDS, Epochs
from ddplint.analysis.loaders import LoaderInfo
from ddplint.analysis.records import LoopSite
from ddplint.analysis.syntax import dotted_name, identifier_words, last_name, receiver, walk

if TYPE_CHECKING:
    from ddplint.analysis.records import CallSite

# Calls that only look at a batch: a loop making nothing else is a smoke test, not training.
_INSPECTION_CALLS = {
    "print", "len", "enumerate", "range", "zip", "isinstance", "type", "str", "repr", "format",
    "info", "debug", "warning", "log", "size", "numel", "dim", "keys", "items", "values",
    "item", "tolist", "min", "max", "mean", "std", "sum", "unique", "float", "int", "round", "abs",
}
_OPTIMIZER_LIKE = re.compile(r"optim|^opt$|scaler|engine")


class Training:
    def __init__(self, facts, epochs: Epochs) -> None:
        self.facts = facts
        self.epochs = epochs

    def is_training_loader(self, loader: LoaderInfo) -> bool:
        """Trained on: iterated where the model steps; else, unless named for evaluation
        (`test_loader = DataLoader(..., shuffle=True)` only evaluated), shuffled or named for
        training."""
        iterations = self.epochs.iterations(loader)
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
        calls = self.calls_in_loop.get(id(where.node), ())
        return bool(calls) and all(site.name in _INSPECTION_CALLS for site in calls)

    def is_evaluation_loader(self, loader: LoaderInfo) -> bool:
        """Not trained on, and named or used for evaluation (`val_loader`, iterated only inside
        `evaluate(...)`): its order and its coverage per rank do not change what is learned."""
        if self.is_training_loader(loader):
            return False
        if loader.names & EVAL_WORDS:
            return True
        places = [
            iteration.where
            for iteration in self.epochs.iterations(loader)
            if id(iteration.where.node) not in self._pass_through_loops
        ]
        return bool(places) and all(self._evaluates_in(place) for place in places)

    def _evaluates_in(self, where) -> bool:
        """A place named for evaluation (`def validate(...)`), or inside a function of the file
        that runs the model frozen (`model.eval()`, `no_grad()`) in a loop and never steps it."""
        scope = where.context.scope
        if set(identifier_words(scope.name)) & EVAL_WORDS:
            return True
        function = self.facts.function_of(scope)
        return function is not None and function in self._evaluation_functions

    @cached_property
    def _pass_through_loops(self) -> set[int]:
        """Comprehension loops that only hand each item on (`(x for x in loader)`): a wrapper
        around the loader, not a place where it is used."""
        out = set()
        for node in walk(self.facts.module):
            if isinstance(node, (cst.GeneratorExp, cst.ListComp, cst.SetComp)):
                loop = node.for_in
                if (
                    isinstance(node.elt, cst.Name)
                    and isinstance(loop.target, cst.Name)
                    and node.elt.value == loop.target.value
                    and loop.inner_for_in is None
                    and not loop.ifs
                ):
                    out.add(id(loop))
        return out

    def _is_training_place(self, where) -> bool:
        if isinstance(where, LoopSite):
            return any(self._is_training_call(site) for site in self.calls_in_loop.get(id(where.node), ()))
        # passed to a callee: named for training (`train_one_epoch(loader)`)
        return any(word.startswith("train") or word == "fit" for word in identifier_words(where.name or ""))

    def _is_training_call(self, site: "CallSite") -> bool:
        if steps_the_model(site):
            return True
        if any(word.startswith("train") for word in identifier_words(site.name or "")):
            return True
        return any(f in self.training_functions for f, _ in self.facts.functions_called_by(site))

    @cached_property
    def calls_in_loop(self) -> dict[int, list["CallSite"]]:
        index: dict[int, list] = {}
        for site in self.facts.calls:
            for loop in site.context.loops:
                index.setdefault(id(loop.node), []).append(site)
        return index

    @cached_property
    def training_functions(self) -> set:
        """The file's functions that call backward() / optimizer.step(), directly or not."""
        return self.facts.functions_reaching(steps_the_model)

    def loop_trains(self, loop: LoopSite) -> bool:
        """The loop's body steps the model, directly or through functions of the file."""
        return any(self._is_training_call(site) for site in self.calls_in_loop.get(id(loop.node), ()))

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
            if freezes and self.calls_in_loop.get(id(loop.node)) and not self.loop_trains(loop):
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
            if function in self.training_functions:
                continue
            calls = self.facts.calls_by_function.get(id(function), [])
            loops = [loop for loop in self.facts.loops if loop.context.scope is function.scope]
            if loops and any(_freezes_the_model(site) for site in calls):
                if any(self.calls_in_loop.get(id(loop.node)) for loop in loops):
                    direct.add(function)
        found = set(direct)
        changed = True
        while changed:
            changed = False
            for function in self.facts.functions:
                if function in found or function in self.training_functions:
                    continue
                for site in self.facts.calls_by_function.get(id(function), []):
                    if any(callee in found for callee, _ in self.facts.functions_called_by(site)):
                        found.add(function)
                        changed = True
                        break
        return found


def steps_the_model(site: "CallSite") -> bool:
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
