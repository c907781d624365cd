"""Training vs evaluation: whether a loader is trained on, whether a loop steps the model, and
whether a block of code runs a whole evaluation pass (DDP010).
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Optional

import libcst as cst

from ddplint.analysis.data_work import DataWork
from ddplint.analysis.epochs import EVAL_WORDS, Epochs
from ddplint.analysis.loaders import LoaderInfo
from ddplint.analysis.records import CallSite, FunctionInfo, LoopSite
from ddplint.analysis.syntax import dotted_name, identifier_words, last_name, receiver, walk
from ddplint.analysis.torch_api import (
    GRADIENT_FREE,
    LIGHTNING_EVALUATION_STEPS,
    LIGHTNING_MODULE,
    RANK_ZERO_ONLY_DECORATORS,
    TENSOR_MATH_NAMESPACES,
    TENSOR_METHODS,
    TORCH_CALLS_THAT_RUN_A_CALLABLE,
)

# Calls that only look at a batch: a loop making nothing else is a smoke test, not training.
_INSPECTION_CALLS = {
    "print", "len", "enumerate", "range", "zip", "isinstance", "type", "str", "repr", "format",
    "info", "debug", "warning", "log", "size", "numel", "dim", "keys", "items", "values",
    "item", "tolist", "min", "max", "mean", "std", "sum", "unique", "float", "int", "round", "abs",
}
_OPTIMIZER_LIKE = re.compile(r"optim|^opt$|scaler|engine")


class Training:
    def __init__(self, facts, flow, ranks, epochs: Epochs, work: DataWork) -> None:
        self.facts = facts
        self.flow = flow
        self.ranks = ranks
        self.epochs = epochs
        self.work = work

    def is_training_loader(self, loader: LoaderInfo) -> bool:
        """Trained on: iterated where the model steps; else, unless named for evaluation
        (`test_loader = DataLoader(..., shuffle=True)` only evaluated), shuffled or named for
        training."""
        iterations = self.epochs.iterations(loader)
        for iteration in iterations:
            if iteration.trained_in_callee or self._is_training_place(iteration.where):
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
        if not isinstance(where, CallSite):
            return False  # `yield from loader`: handed on, trained on (or not) by the consumer
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
        ranks = self.ranks
        # `if args.local_rank == -1: evaluate(...)` inside the guard: the single-GPU run only.
        calls = [site for site in calls if not ranks.runs_single_process(site.context)]
        loops = [loop for loop in loops if not ranks.runs_single_process(loop.context)]
        freezes = any(_freezes_the_model(site) for site in calls)
        for loop in loops:
            if freezes and not self.loop_trains(loop) and self.passes_over_data(loop):
                return "an evaluation loop"
        for site in calls:
            if any(f in self._evaluation_functions for f, _ in self.facts.functions_called_by(site)):
                return f"{site.name}(...)"
            if _names_evaluation(site) and not self.facts.functions_called_by(site):
                return f"{site.name}(...)"
        return None

    def rank_zero_only_evaluation_steps(self) -> list[tuple["FunctionInfo", cst.Decorator]]:
        """A LightningModule's `validation_step` / `test_step` decorated `@rank_zero_only`: the
        Trainer runs the evaluation loop on every rank over its shard, and the step does nothing
        on every rank but 0. (function, decorator) for each."""
        modules = self.facts.subclasses_of(LIGHTNING_MODULE)
        found = []
        for function in self.facts.functions:
            if function.class_name not in modules or function.name not in LIGHTNING_EVALUATION_STEPS:
                continue
            for decorator in function.node.decorators:
                target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
                if self.facts.qualified_names(target) & RANK_ZERO_ONLY_DECORATORS:
                    found.append((function, decorator))
        return found

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
                if any(self.passes_over_data(loop) for loop in loops):
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

    # -- does a loop go over data? ------------------------------------------------------------------
    def passes_over_data(self, loop: LoopSite) -> bool:
        """Whether a loop goes over data whose amount grows with the dataset, running something on
        each item: a loader or a dataset of the file, a batch source fed by one (`for k in
        range(eval_iters): x, y = get_batch("val")`), or items of an unknown origin handed to
        something that may be a model. Not a loop that repeats a fixed input a set number of times
        (`for _ in range(num_images): pipeline(prompt_embeds)`), nor one over items written in the
        code or given on the command line (a few prompts or image files for the log), nor one that
        only hands the items to array, math and logging functions (scoring results already made)."""
        if not self.calls_in_loop.get(id(loop.node)):
            return False
        if self._draws_data(loop):
            return True
        iterable = loop.iterable
        if iterable is None:
            return False  # `while` that draws no data: a generation loop, not a pass
        scope, arms = loop.context.scope, loop.context.branches
        iterated = _what_is_iterated(iterable)
        if iterated is None:
            # `range(n)` drawing no data: n repeats of one input, unless n is not a number the
            # code or the command line gives and the body picks items by the index (`data[i]`)
            if self._fixed_count(iterable, scope, arms):
                return False
            iterated = _indexed_by_item(loop)
            if not iterated:
                return False
        if self.work.loop_work(loop, self.epochs.loaders.all) is not None:
            return True
        if all(self._fixed_size(expr, scope, arms) for expr in iterated):
            return False
        return self._hands_items_on(loop)

    def _draws_data(self, loop: LoopSite) -> bool:
        """The body takes the next batch (`next(it)`) or loads data (`get_batch("val")` whose body
        reads the data file)."""
        items = _items_of(loop)
        for site in self.calls_in_loop.get(id(loop.node), ()):
            if site.name == "next" and isinstance(site.node.func, cst.Name):
                return True
            if any(_mentions(arg.value, items) for arg in site.node.args):
                continue  # `tokenizer(prompt)`: works on the loop's own item, judged by what is iterated
            if self.work.work_of(site) is not None:
                return True
        return False

    def _fixed_size(self, expr: cst.BaseExpression, scope, arms: tuple = (), depth: int = 0) -> bool:
        """Items written in the code (`["a photo of a dog", ...]`, `{"unet": unet}.items()`) or
        given on the command line (`args.validation_images`): their number does not grow with the
        dataset."""
        if depth > 3:
            return False
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _VIEWS:
            return self._fixed_size(expr.func.value, scope, arms, depth + 1)
        sources = self.flow.sources(expr, scope, arms)
        if not sources:
            return False
        for source in sources:
            node = source.node
            if node is None:
                return False
            if isinstance(node, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.SimpleString, cst.ConcatenatedString)):
                continue  # written in the code (an empty list is filled where it is appended to)
            if node is not expr and isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                if node.func.attr.value in _VIEWS and self._fixed_size(node.func.value, source.scope, (), depth + 1):
                    continue
            if self._from_command_line(node, source.scope):
                continue
            if node is not expr and self._made_from_fixed_items(node, source.scope, depth):
                continue
            if isinstance(node, cst.BinaryOperation) and node is not expr:
                # `args.validation_image * len(args.validation_prompt)`: repeated written items
                sides = [node.left, node.right]
                if any(self._fixed_size(side, source.scope, (), depth + 1) for side in sides) and all(
                    _a_count(side) or self._fixed_size(side, source.scope, (), depth + 1) for side in sides
                ):
                    continue
            return False
        return True

    def _made_from_fixed_items(self, node: cst.CSTNode, scope, depth: int) -> bool:
        """A comprehension over items of a fixed number (`[tokenize(p) for p in prompts]`), or a
        call given such items and otherwise only constants (`model.generate(prompt_tokens,
        max_len=64)`): what it makes grows with the prompts, not with a dataset."""
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            loops: list[cst.BaseExpression] = []
            clause: Optional[cst.CompFor] = node.for_in
            while clause is not None:
                loops.append(clause.iter)
                clause = clause.inner_for_in
            return all(self._fixed_size(iterable, scope, (), depth + 1) for iterable in loops)
        if not isinstance(node, cst.Call) or not node.args:
            return False
        site = self._call_sites.get(id(node))
        if site is None or self.work.work_of(site) is not None:
            return False  # `load_dataset("json", data_files=["val.json"])`: reads a data set
        items = [arg.value for arg in node.args if not _a_constant(arg.value)]
        return bool(items) and all(self._written_items(value, scope, depth + 1) for value in items)

    def _written_items(self, expr: cst.BaseExpression, scope, depth: int) -> bool:
        """Items the code writes out, or makes from such (`[tokenize(p) for p in prompts]`); not an
        option's value (`open(args.val_file)` reads as many lines as the file has)."""
        if depth > 3:
            return False
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
            return True
        sources = self.flow.sources(expr, scope) if isinstance(expr, (cst.Name, cst.Attribute)) else []
        return bool(sources) and all(
            source.node is not None
            and (
                isinstance(source.node, (cst.List, cst.Tuple, cst.Set, cst.Dict))
                or (source.node is not expr and self._made_from_fixed_items(source.node, source.scope, depth))
            )
            for source in sources
        )

    @cached_property
    def _call_sites(self) -> dict[int, "CallSite"]:
        return {id(site.node): site for site in self.facts.calls}

    def _fixed_count(self, call: cst.BaseExpression, scope, arms: tuple) -> bool:
        """`range(4)`, `range(args.num_validation_images)`: every bound is a number written in
        the code or given on the command line."""
        if not isinstance(call, cst.Call):
            return False
        return all(self._fixed_number(arg.value, scope, arms) for arg in call.args)

    def _fixed_number(self, expr: cst.BaseExpression, scope, arms: tuple = (), depth: int = 0) -> bool:
        if isinstance(expr, cst.Integer):
            return True
        if isinstance(expr, cst.BinaryOperation):
            return self._fixed_number(expr.left, scope, arms, depth) and self._fixed_number(
                expr.right, scope, arms, depth
            )
        if depth > 3 or not isinstance(expr, (cst.Name, cst.Attribute)):
            return False
        sources = self.flow.sources(expr, scope, arms)
        return bool(sources) and all(
            source.node is not None
            and (
                self._from_command_line(source.node, source.scope)
                or (source.node is not expr and self._fixed_number(source.node, source.scope, (), depth + 1))
            )
            for source in sources
        )

    def _from_command_line(self, node: cst.CSTNode, scope) -> bool:
        """`args.validation_prompts` where `args = parser.parse_args()` of an
        `argparse.ArgumentParser`: what the user typed, a handful of values."""
        base = node
        while isinstance(base, (cst.Attribute, cst.Subscript)):
            base = base.value
        if base is node or not isinstance(base, cst.Name):
            return False
        sources = self.flow.sources(base, scope)
        return bool(sources) and all(
            source.node is not None and self._parses_arguments(source.node, source.scope) for source in sources
        )

    def _parses_arguments(self, node: cst.CSTNode, scope) -> bool:
        if isinstance(node, cst.Subscript):
            node = node.value  # `parser.parse_known_args()[0]`
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            return False
        if node.func.attr.value not in ("parse_args", "parse_known_args"):
            return False
        parsers = self.flow.sources(node.func.value, scope)
        return bool(parsers) and all(
            isinstance(p.node, cst.Call) and "argparse.ArgumentParser" in self.facts.qualified_names(p.node.func)
            for p in parsers
        )

    def _hands_items_on(self, loop: LoopSite) -> bool:
        """An item of the loop (or a value computed from one in the body) is an argument of a
        call that may run a model: not only of array, math, image or logging functions
        (`np.argsort(scores)`, `wandb.Image(image)`), and not only the receiver of its own methods
        (`tracker.log(images)`)."""
        items = _items_of(loop)
        if isinstance(loop.node, cst.For):
            body = walk(loop.node.body)  # walked once: the two rounds look at the same nodes
            for _ in range(2):  # values computed from an item in the body carry it too
                for node in body:
                    if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and node.value is not None:
                        if _mentions(node.value, items):
                            targets = node.targets if isinstance(node, cst.Assign) else [node]
                            for target in targets:
                                items.update(n.value for n in walk(target.target) if isinstance(n, cst.Name))
        for site in self.calls_in_loop.get(id(loop.node), ()):
            if self._runs_no_model(site) or _stores(site):
                continue
            if any(_mentions(arg.value, items) for arg in site.node.args):
                return True
        return False

    def _runs_no_model(self, site: "CallSite") -> bool:
        """A call of an array, math, image or logging library, of torch's tensor math
        (`torch.mm`, `F.normalize`), a tensor method that reshapes, compares or reduces
        (`scores.topk(k)`), or a builtin such as `len`."""
        qualified = self.facts.qualified_names(site.node.func)
        if any(q.startswith(_NO_MODEL_MODULES) or _tensor_math(q) for q in qualified):
            return True
        if isinstance(site.node.func, cst.Attribute) and not qualified and site.name in TENSOR_METHODS:
            return True
        return (
            isinstance(site.node.func, cst.Name)
            and site.name in _BUILTINS
            and not self.facts.functions_called_by(site)
            and site.name not in self.facts.classes
        )


# Libraries whose functions take numbers, arrays, images or log records and never run a model.
_NO_MODEL_MODULES = (
    "numpy.", "math.", "statistics.", "scipy.", "PIL.", "wandb.", "matplotlib.", "json.", "logging.",
    "os.", "pandas.", "torchvision.utils.",
)
_BUILTINS = {
    "print", "len", "str", "repr", "int", "float", "bool", "round", "abs", "min", "max", "sum", "sorted",
    "enumerate", "zip", "range", "list", "tuple", "dict", "set", "isinstance", "format", "any", "all",
}
_CONTAINER_METHODS = {"append", "extend", "insert", "add", "update", "appendleft", "setdefault"}
# `d.items()`: the same items as the container.
_VIEWS = {"keys", "values", "items"}
# Wrappers that iterate the same items (`enumerate(prompts)`).
_SAME_ITEMS = {"enumerate", "zip", "reversed", "sorted", "list", "tuple", "iter", "tqdm"}


def _tensor_math(qualified: str) -> bool:
    """`torch.mm`, `torch.gather`, `torch.nn.functional.normalize`: computes on the tensors given."""
    if qualified.startswith(TENSOR_MATH_NAMESPACES):
        return True
    return qualified.count(".") == 1 and qualified.startswith("torch.") and qualified not in TORCH_CALLS_THAT_RUN_A_CALLABLE


def _what_is_iterated(iterable: cst.BaseExpression) -> Optional[list[cst.BaseExpression]]:
    """The containers a loop goes over: `enumerate(x)` -> [x], `zip(a, b)` -> [a, b],
    `range(len(x))` -> [x]; None for a plain `range(n)` (a count, not items)."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name):
        name = iterable.func.value
        positional = [arg.value for arg in iterable.args if arg.keyword is None and not arg.star]
        if name == "range":
            # `range(len(val_set))`, `range(len(data) // batch_size)`: the items of what is counted
            counted = [
                node.args[0].value for value in positional for node in walk(value)
                if isinstance(node, cst.Call) and last_name(node.func) == "len" and node.args
            ]
            return counted or None
        if name in _SAME_ITEMS and positional:
            inner: list[cst.BaseExpression] = []
            for value in (positional if name == "zip" else positional[:1]):
                found = _what_is_iterated(value)
                if found is None:
                    return None
                inner.extend(found)
            return inner
    return [iterable]


def _stores(site: "CallSite") -> bool:
    """`images.append(image)`: the item is kept for later, and judged where the list is used."""
    return isinstance(site.node.func, cst.Attribute) and site.name in _CONTAINER_METHODS


def _items_of(loop: LoopSite) -> set[str]:
    target = getattr(loop.node, "target", None)
    return {n.value for n in walk(target) if isinstance(n, cst.Name)} if target is not None else set()


def _indexed_by_item(loop: LoopSite) -> list[cst.BaseExpression]:
    """What the body of `for i in range(n)` subscripts with the index (`val_data[i * bs:]`)."""
    items = _items_of(loop)
    if not items or not isinstance(loop.node, cst.For):
        return []
    return [
        node.value for node in walk(loop.node.body)
        if isinstance(node, cst.Subscript) and any(_mentions(element.slice, items) for element in node.slice)
    ]


def _a_constant(expr: cst.BaseExpression) -> bool:
    """`64`, `0.6`, `"greedy"`, `False`, `-1`: a setting, not items."""
    if isinstance(expr, cst.UnaryOperation):
        expr = expr.expression
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None")
    return isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString))


def _a_count(expr: cst.BaseExpression) -> bool:
    """`3`, `len(prompts)`: a number of repeats."""
    return isinstance(expr, cst.Integer) or (isinstance(expr, cst.Call) and last_name(expr.func) == "len")


def _mentions(expr: cst.CSTNode, names: set[str]) -> bool:
    """A name of `names` is used in `expr`, other than as text (`f"{tracker.name}"`: a message)."""
    if isinstance(expr, cst.FormattedString):
        return False
    if isinstance(expr, cst.Name):
        return expr.value in names
    return any(_mentions(child, names) for child in expr.children)


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
    if name in GRADIENT_FREE:
        return True
    return name == "eval" and isinstance(site.node.func, cst.Attribute) and not site.node.args
