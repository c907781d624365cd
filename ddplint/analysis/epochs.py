"""Where each loader is iterated, and which loop repeats that pass (the epoch loop): in its own
function, around the call that handed the loader over, or around the calls of the function that
iterates it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Optional, Union

import libcst as cst

from ddplint.analysis.loaders import LoaderInfo, Loaders, constructor_call_for_receiver, self_attribute
from ddplint.analysis.records import CallSite, Context, LoopSite
from ddplint.analysis.syntax import argument, identifier_words, int_value, positional_args, walk

if TYPE_CHECKING:
    from ddplint.analysis.summaries import LoaderTrainer, PassRepeater

_YIELD_FROM = re.compile(r"\byield\s+from\b")
EVAL_WORDS = {
    "val", "valid", "validation", "validate", "eval", "evaluation", "evaluate", "test", "testing", "dev",
    "holdout", "calib", "predict", "prediction", "inference",
}


@dataclass(eq=False)
class YieldSite:
    """`yield from <iterable>`: a generator hands on every item of the iterable, one pass."""

    node: cst.Yield
    context: Context

    @property
    def iterable(self) -> cst.BaseExpression:
        assert isinstance(self.node.value, cst.From)
        return self.node.value.item


@dataclass(eq=False)
class Iteration:
    """A place where a loader is iterated, with the loop (if any) around it that repeats that."""

    loader: LoaderInfo
    where: Union[CallSite, LoopSite, YieldSite]
    epoch_loop: Optional[LoopSite]
    # The loader handed to another project module's generator that starts a new pass over it on
    # every turn of its own loop (`forever(loader)`), or to a function or method of another
    # module that runs the epochs over it (`trainer.fit(loader)`): where that loop is ("utils.py:3").
    restarted_in: Optional[str] = None
    # Handed to another module's function or method that trains on it (its loop steps the model).
    trained_in_callee: bool = False
    # `restarted_in` is that callee's epoch loop rather than a generator's.
    epochs_in_callee: bool = False


class Epochs:
    def __init__(self, facts, flow, loaders: Loaders) -> None:
        self.facts = facts
        self.flow = flow
        self.loaders = loaders

    def iterations(self, loader: LoaderInfo) -> list[Iteration]:
        return self._iterations.get(id(loader), [])

    @cached_property
    def _iterations(self) -> dict[int, list[Iteration]]:
        out: dict[int, list[Iteration]] = {}
        for loader in self.loaders.all:
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
            for place in self._yields_from:
                for via in self._feeding_paths(place.iterable, place.context, target):
                    found.append(Iteration(loader, place, self.repeating_loop(place.context, via)))
            for site, repeater in self._project_pass_repeaters:
                given = argument(site.node, repeater.parameter, repeater.position)
                if given is not None and self._feeding_paths(given, site.context, target):
                    found.append(Iteration(loader, site, None, restarted_in=repeater.where))
            for site, trainer, handed_at in self._project_loader_trainers:
                given = argument(handed_at, trainer.parameter, trainer.position)
                context = site.context if handed_at is site.node else self._context_of_call(handed_at, site)
                if given is None or not self._feeding_paths(given, context, target):
                    continue
                if trainer.sets_epoch:  # it sets the sampler's epoch itself
                    found.append(Iteration(loader, site, None, trained_in_callee=True))
                elif trainer.epochs_at is None:  # one pass there: the caller's loop repeats it
                    found.append(Iteration(loader, site, self.repeating_loop(site.context, ()), trained_in_callee=True))
                else:
                    found.append(Iteration(
                        loader, site, None, restarted_in=trainer.epochs_at, trained_in_callee=True, epochs_in_callee=True
                    ))
            for site in self._calls_out_to_trainers:
                # `Trainer(train_dataloader=a, eval_dataloader=b)`: only `a` is trained on there.
                handed = [arg for arg in site.node.args if not _keyword_names_evaluation(arg)]
                if any(self.flow.feeds(arg.value, site.context.scope, target) for arg in handed):
                    found.append(Iteration(loader, site, self.repeating_loop(site.context, ())))
            out[id(loader)] = found
        return out

    def replays_first_pass(self, iteration: Iteration) -> bool:
        """`itertools.cycle(loader)`: cycle keeps the items of its first pass and yields them
        again, so every later pass repeats the first one, batch for batch, whatever the sampler
        would do on a new pass."""
        where = iteration.where
        return isinstance(where, CallSite) and "itertools.cycle" in self.facts.qualified_names(where.node.func)

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

    def runs_once(self, loop: LoopSite) -> bool:
        """`for epoch in range(1)` / `range(0, 1)`, also through a constant (`EPOCHS = 1`): one
        pass, so nothing repeats (what an epoch loop's seed would change never comes)."""
        call = loop.node.iter if isinstance(loop.node, cst.For) else None
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name) or call.func.value != "range":
            return False
        bounds = [self._constant(arg.value, loop) for arg in positional_args(call)]
        if len(bounds) == 1 and bounds[0] is not None:
            return bounds[0] <= 1
        if len(bounds) == 2 and None not in bounds:
            return bounds[1] - bounds[0] <= 1  # type: ignore[operator]
        return False

    def _constant(self, expr: cst.BaseExpression, loop: LoopSite) -> Optional[int]:
        """An integer the script fixes: a literal, or a name every assignment of which is the same
        literal. A default is not one (`--epochs` with `default=1`, `def main(epochs=1)`): it is
        the knob the user turns."""
        literal = int_value(expr)
        if literal is not None:
            return literal
        sources = self.flow.sources(expr, loop.context.scope, loop.context.branches)
        if any(source.node is None or id(source.node) in self._parameter_defaults for source in sources):
            return None
        values = {int_value(source.node) for source in sources}  # type: ignore[arg-type]
        return values.pop() if len(values) == 1 else None

    @cached_property
    def _parameter_defaults(self) -> frozenset:
        return frozenset(
            id(param.default)
            for function in self.facts.functions
            for param in (*function.node.params.params, *function.node.params.kwonly_params)
            if param.default is not None
        )

    @cached_property
    def _project_pass_repeaters(self) -> list[tuple[CallSite, "PassRepeater"]]:
        """Calls of other project modules' generators that re-iterate what they are given
        without setting an epoch themselves."""
        project = self.facts.project
        if project is None:
            return []
        out = []
        for site in self.facts.calls:
            repeater = project.pass_repeater(self.facts, site)
            if repeater is not None and not repeater.sets_epoch:
                out.append((site, repeater))
        return out

    @cached_property
    def _project_loader_trainers(self) -> list[tuple[CallSite, "LoaderTrainer", cst.Call]]:
        """Calls of other project modules' functions, and of methods of their classes on an
        instance built here (`Trainer(...).fit(loader)`, `trainer = Trainer(...)` then
        `trainer.fit(loader)`), that train on a parameter; with the call whose arguments hold
        that parameter: the call itself, or the constructor call when the method trains on what
        the constructor stored on the instance (`Trainer(model, loader).fit()`)."""
        project = self.facts.project
        if project is None:
            return []
        out = []
        for site in self.facts.calls:
            if self.facts.functions_called_by(site):
                continue  # a function of this file: followed here, not summarised
            trainer = project.loader_trainer(self.facts, site, None)
            if trainer is not None:
                out.append((site, trainer, site.node))
                continue
            built = constructor_call_for_receiver(site)
            if built is None:
                continue
            trainer = project.loader_trainer(self.facts, site, built.func)
            if trainer is not None:
                out.append((site, trainer, site.node))
            stored = project.loader_trainer(self.facts, site, built.func, stored=True)
            if stored is not None:
                out.append((site, stored, built))
        return out

    def _context_of_call(self, call: cst.Call, fallback: CallSite) -> Context:
        """Where a constructor call sits, to follow its arguments from there."""
        for site in self.facts.calls:
            if site.node is call:
                return site.context
        return fallback.context

    def pass_repeater(self, function) -> Optional[tuple[str, LoopSite]]:
        """(parameter, loop) when `function` is a generator that hands on every item of one of
        its parameters anew on each turn of a loop of its own: `while True: yield from loader`,
        `for _ in count(): for batch in loader: yield batch`. For another module's callers."""
        for place in self._yields_from:
            if place.context.scope is function.scope and place.context.loops:
                name = _parameter_named(function, place.iterable)
                if name is not None:
                    return name, place.context.loops[-1]
        for name, loop, statement in self._loops_over_a_parameter(function):
            if loop.context.loops and any(isinstance(node, cst.Yield) for node in walk(statement.body)):
                return name, loop.context.loops[-1]
        return None

    def loader_trainer(self, function, trains) -> Optional[tuple[str, Optional[LoopSite]]]:
        """(parameter, the loop around that pass or None) when `function` trains on what one of
        its parameters gives it: a `for` loop of its own over the parameter (`for x, y in
        loader`, `enumerate(loader)`, `tqdm(loader)`) whose body steps the model, as `trains`
        tells. The loop around it in the same function, if any, runs the epochs
        (`def fit(self, loader): for epoch in range(self.epochs): for batch in loader: ...`).
        For another module's callers: a loader handed to it is trained on there."""
        for name, loop, statement in self._loops_over_a_parameter(function):
            if not any(isinstance(node, cst.Yield) for node in walk(statement.body)) and trains(loop):
                return name, (loop.context.loops[-1] if loop.context.loops else None)
        return None

    def stored_loader_trainers(self, owner, trains) -> dict[str, tuple[str, Optional[LoopSite]]]:
        """method -> (`__init__` parameter, the loop around the pass or None) for the methods of
        the class `owner` that train on what its constructor stored on the instance: `__init__`
        does `self.loader = loader` and a method loops over `self.loader` stepping the model, as
        `trains` tells; or a method of the class calls such a method (`fit()` calling
        `self._train_epoch()` in its epoch loop), a few calls up. For another module's callers:
        the loader handed to the constructor is trained on when one of them is called."""
        methods = [
            f for f in self.facts.functions
            if f.class_name == owner.name and owner.scope is not None and f.scope.parent is owner.scope
            and f.params and not f.node.decorators
        ]
        init = next((f for f in methods if f.name == "__init__"), None)
        stored = _attributes_stored_from_parameters(init) if init is not None else {}
        if not stored:
            return {}
        found: dict[str, tuple[str, Optional[LoopSite]]] = {}
        for method in methods:
            for loop in self.facts.loops:
                statement = loop.node
                if not isinstance(statement, cst.For) or loop.context.scope is not method.scope:
                    continue
                attribute = self_attribute(_unwrapped(statement.iter))
                if attribute is None or attribute[len("self."):] not in stored:
                    continue
                if not any(isinstance(node, cst.Yield) for node in walk(statement.body)) and trains(loop):
                    found.setdefault(method.name, (stored[attribute[len("self."):]], loop.context.loops[-1] if loop.context.loops else None))
        by_name = {f.name: f for f in methods}
        for _ in range(3):  # callers within the class, a few levels up
            for name, (parameter, around) in list(found.items()):
                for site, _binding in self.facts.call_sites_of(by_name[name]):
                    caller = self.facts.function_of(site.context.scope)
                    caller_name = caller.name if caller is not None else None
                    if caller_name is None or by_name.get(caller_name) is not caller or caller_name in found:
                        continue
                    found[caller_name] = (parameter, around or (site.context.loops[-1] if site.context.loops else None))
        found.pop("__init__", None)
        return found

    def _loops_over_a_parameter(self, function) -> list[tuple[str, LoopSite, cst.For]]:
        """(parameter, loop, its statement) for the `for` statements of `function` itself (not of a
        comprehension, which yields and steps nothing of its own) that iterate one of its
        parameters, bare or through a wrapper that keeps the items (`enumerate(loader)`)."""
        out = []
        for loop in self.facts.loops:
            statement = loop.node
            if isinstance(statement, cst.For) and loop.context.scope is function.scope:
                name = _parameter_named(function, _unwrapped(statement.iter))
                if name is not None:
                    out.append((name, loop, statement))
        return out

    @cached_property
    def _yields_from(self) -> list[YieldSite]:
        """Every `yield from x` whose `x` is a name or attribute chain (its place is known):
        `while True: yield from loader` starts a new pass over the loader on each turn. Looked
        for only in files that spell it."""
        if _YIELD_FROM.search(self.facts.source) is None:
            return []
        out = []
        for node in walk(self.facts.module):
            if isinstance(node, cst.Yield) and isinstance(node.value, cst.From):
                context = self.facts.context_of(node.value.item)
                if context is not None:
                    out.append(YieldSite(node, context))
        return out

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


# Calls that hand on the items of their first argument, one pass, in order: a loop over
# `enumerate(loader)` or `tqdm(loader)` iterates the loader.
_ITEM_KEEPING_WRAPPERS = frozenset({"enumerate", "tqdm", "iter"})


def _unwrapped(expr: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expr, cst.Call) and expr.args and not expr.args[0].keyword and not expr.args[0].star:
        name = expr.func.attr.value if isinstance(expr.func, cst.Attribute) else getattr(expr.func, "value", None)
        if name not in _ITEM_KEEPING_WRAPPERS:
            break
        expr = expr.args[0].value
    return expr


def _attributes_stored_from_parameters(init) -> dict[str, str]:
    """attribute -> parameter for each `self.<attribute> = <parameter>` in `__init__` (also
    `self.a, self.b = a, b`), the parameter never rebound there."""
    out: dict[str, str] = {}
    for node in walk(init.node.body):
        if not isinstance(node, cst.Assign):
            continue
        for target in node.targets:
            pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = [(target.target, node.value)]
            if isinstance(target.target, cst.Tuple) and isinstance(node.value, cst.Tuple):
                if len(target.target.elements) != len(node.value.elements):
                    continue
                pairs = [(t.value, v.value) for t, v in zip(target.target.elements, node.value.elements)]
            for left, right in pairs:
                attribute = self_attribute(left)
                parameter = _parameter_named(init, right)
                if attribute is not None and parameter is not None and parameter != "self":
                    out.setdefault(attribute[len("self."):], parameter)
    return out


def _parameter_named(function, expr: cst.BaseExpression) -> Optional[str]:
    """The parameter of `function` that `expr` names, if the function never rebinds it."""
    if not isinstance(expr, cst.Name) or expr.value not in function.params:
        return None
    bindings = function.scope.bindings.get(expr.value, [])
    return expr.value if all(binding.kind == "param" for binding in bindings) else None


def _keyword_names_evaluation(arg: cst.Arg) -> bool:
    return arg.keyword is not None and bool(set(identifier_words(arg.keyword.value)) & EVAL_WORDS)
