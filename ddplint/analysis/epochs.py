"""Where each loader is iterated, and which loop repeats that pass (the epoch loop): in its own
function, around the call that handed the loader over, or around the calls of the function that
iterates it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Optional

import libcst as cst

from ddplint.analysis.loaders import LoaderInfo, Loaders
from ddplint.analysis.records import LoopSite
from ddplint.analysis.syntax import identifier_words, int_value, positional_args

if TYPE_CHECKING:
    from ddplint.analysis.records import CallSite

EVAL_WORDS = {
    "val", "valid", "validation", "validate", "eval", "evaluation", "evaluate", "test", "testing", "dev",
    "holdout", "calib", "predict", "prediction", "inference",
}


@dataclass(eq=False)
class Iteration:
    """A place where a loader is iterated, with the loop (if any) around it that repeats that."""

    loader: LoaderInfo
    where: "CallSite | LoopSite"
    epoch_loop: Optional["LoopSite"]


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
        return not isinstance(where, LoopSite) and "itertools.cycle" in self.facts.qualified_names(where.node.func)

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


def _keyword_names_evaluation(arg: cst.Arg) -> bool:
    return arg.keyword is not None and bool(set(identifier_words(arg.keyword.value)) & EVAL_WORDS)
